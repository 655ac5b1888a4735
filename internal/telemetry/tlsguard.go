package telemetry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

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
	g.creds, g.plain = c, sig.Insecure
	g.mu.Unlock()
	return &watchedCreds{TransportCredentials: c, g: g}
}

// ErrCollectorSpeaksTLS is the cause of an OTLP/gRPC export over plain text
// (an http:// endpoint, OTEL_EXPORTER_OTLP_INSECURE=true) to a collector
// that speaks TLS: it closes the connection without a word, and gRPC
// retries until the deadline.
var ErrCollectorSpeaksTLS = fmt.Errorf("%w: the collector speaks TLS, the endpoint plain text (use https://, or OTEL_EXPORTER_OTLP_INSECURE=false)", ErrTLSHandshake)

// watchedCreds reports every client handshake to its guard.
type watchedCreds struct {
	credentials.TransportCredentials
	g *RefusalGuard
}

func (c *watchedCreds) ClientHandshake(ctx context.Context, authority string, conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	out, info, err := c.TransportCredentials.ClientHandshake(ctx, authority, conn)
	c.g.handshake(authority, err)
	if err != nil {
		return out, info, err
	}
	return &watchedConn{Conn: out, g: c.g, authority: authority}, info, nil
}

// watchedConn reports to its guard what the first read after a handshake
// tells (docs/resource.md#export-errors): a TLS alert (TLS 1.3 servers
// reject a missing or unknown client certificate after the handshake), or,
// over plain text, a connection closed before the first byte by a
// collector that speaks TLS.
type watchedConn struct {
	net.Conn
	g         *RefusalGuard
	authority string
	got       bool // a byte was read
}

func (c *watchedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.got = true
	}
	if err != nil && !c.got {
		c.g.afterHandshake(c.authority, c.Conn.RemoteAddr(), err)
	}
	return n, err
}

// afterHandshake records the TLS problem that a connection's first read
// reveals, and cancels the exports in progress.
func (g *RefusalGuard) afterHandshake(authority string, addr net.Addr, err error) {
	g.mu.Lock()
	plain := g.plain
	g.mu.Unlock()
	switch {
	case tlsProblem(err):
		g.handshake(authority, err)
	case plain && addr != nil && speaksTLS(addr):
		g.mu.Lock()
		defer g.mu.Unlock()
		g.authority = authority
		g.lastTLS = fmt.Errorf("%w: %s", ErrCollectorSpeaksTLS, addr)
		for c := range g.inflight {
			c.cancel(g.lastTLS)
		}
	}
}

// speaksTLS reports whether the server at addr answers a TLS handshake
// (any certificate), within probeTimeout.
func speaksTLS(addr net.Addr) bool {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, addr.Network(), addr.String())
	if err != nil {
		return false
	}
	defer conn.Close()
	tc := tls.Client(conn, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}) //nolint:gosec // a probe: nothing is sent over it
	return tc.HandshakeContext(ctx) == nil
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
	last := func() error {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.lastTLS
	}
	g.mu.Lock()
	plain := g.plain
	g.mu.Unlock()
	if plain {
		// Plain text to a collector that spoke TLS last time: ask again.
		remote := conn.RemoteAddr()
		conn.Close()
		if speaksTLS(remote) {
			return last()
		}
		g.handshake(authority, nil)
		return nil
	}
	out, _, err := creds.ClientHandshake(pctx, authority, conn)
	g.handshake(authority, err)
	if err == nil {
		// TLS 1.3 servers reject a client certificate after the handshake:
		// the first read says so at once (a healthy server sends nothing
		// before the client's preface: the read times out).
		_ = out.SetReadDeadline(time.Now().Add(probeTimeout))
		_, err = out.Read(make([]byte, 1))
		if tlsProblem(err) {
			g.handshake(authority, err)
		}
	}
	if err != nil {
		conn.Close()
		if tlsProblem(err) {
			return last()
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
