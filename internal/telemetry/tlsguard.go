package telemetry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// ErrTLSHandshake is the cause of an OTLP/gRPC export that ended at once
// because the TLS handshake with the collector failed for a certificate or
// protocol reason; the handshake's error is wrapped with it.
var ErrTLSHandshake = errors.New("the TLS handshake with the collector failed")

// Credentials returns the transport credentials of sig's OTLP/gRPC
// exporter: plain text when sig.Insecure, else TLS with sig.TLS (the
// system's roots when nil), watched by g (see [RefusalGuard]). A nil guard
// returns them unwatched.
func (g *RefusalGuard) Credentials(sig Signal) credentials.TransportCredentials {
	var c credentials.TransportCredentials
	if sig.Insecure {
		c = insecure.NewCredentials()
	} else {
		cfg := sig.TLS
		if cfg == nil {
			cfg = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		c = credentials.NewTLS(cfg)
	}
	if g == nil {
		return c
	}
	g.mu.Lock()
	g.creds = c
	g.mu.Unlock()
	return &watchedCreds{TransportCredentials: c, g: g}
}

// watchedCreds reports every client handshake to its guard.
type watchedCreds struct {
	credentials.TransportCredentials
	g *RefusalGuard
}

func (c *watchedCreds) ClientHandshake(ctx context.Context, authority string, conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	out, info, err := c.TransportCredentials.ClientHandshake(ctx, authority, conn)
	c.g.handshake(authority, err)
	return out, info, err
}

func (c *watchedCreds) Clone() credentials.TransportCredentials {
	return &watchedCreds{TransportCredentials: c.TransportCredentials.Clone(), g: c.g}
}

// handshake records the outcome of a client handshake; a TLS problem
// cancels the exports in progress.
func (g *RefusalGuard) handshake(authority string, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.authority = authority
	switch {
	case err == nil:
		g.lastTLS = nil
	case tlsProblem(err):
		g.lastTLS = fmt.Errorf("%w: %w", ErrTLSHandshake, err)
		for c := range g.inflight {
			c.cancel(g.lastTLS)
		}
	}
}

// probeTLS makes one handshake with the collector, bounded by
// probeTimeout, and returns its TLS problem, if any (nil when it could not
// be made: no address known, the dial failed, or it took too long).
func (g *RefusalGuard) probeTLS(ctx context.Context) error {
	g.mu.Lock()
	addr, authority, creds := g.lastAddr, g.authority, g.creds
	g.mu.Unlock()
	if addr == "" || creds == nil {
		return nil
	}
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	conn, err := g.dial(pctx, addr)
	if err != nil {
		return nil
	}
	out, _, err := creds.ClientHandshake(pctx, authority, conn)
	g.handshake(authority, err)
	if err != nil {
		conn.Close()
		if tlsProblem(err) {
			g.mu.Lock()
			defer g.mu.Unlock()
			return g.lastTLS
		}
		return nil
	}
	out.Close()
	return nil
}

// tlsProblem reports whether a handshake error is one that retrying does
// not cure: the server's certificate is not trusted, not valid or not for
// the server's name; the server does not speak TLS; the server sent an
// alert (it rejected the client certificate, or the protocol); the server
// does not speak HTTP/2 over TLS (no ALPN "h2", which gRPC requires).
// Timeouts, resets and closed connections are not.
func tlsProblem(err error) bool {
	var (
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		record   tls.RecordHeaderError
		alert    tls.AlertError
	)
	return errors.As(err, &verify) || errors.As(err, &unknown) || errors.As(err, &hostname) ||
		errors.As(err, &invalid) || errors.As(err, &record) || errors.As(err, &alert) ||
		strings.Contains(err.Error(), "remote error: tls: ") ||
		strings.Contains(err.Error(), "missing selected ALPN property")
}
