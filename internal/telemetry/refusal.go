package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc/credentials"
)

// ErrCollectorRefused is the cause of a final export that ended at once
// because the collector refused the connection.
var ErrCollectorRefused = errors.New("the collector refused the connection")

// probeTimeout bounds the one connection attempt a final export makes when
// the last attempt of the exporter was refused, and the guard's TLS probes
// (see tlsguard.go). A variable only so that the package's tests can raise
// it (TestMain): their subject is what a probe finds, not its budget, which
// a loaded machine can miss.
var probeTimeout = 250 * time.Millisecond

// RefusalGuard makes the final exports of an OTLP/gRPC exporter end at once
// when the collector refuses connections. The gRPC exporter retries an
// unavailable collector with backoff until its deadline, so without this a
// process whose collector is down waits out its whole shutdown timeout
// (OTLP/HTTP does not retry a refused connection).
//
// The guard is the exporter's dialer: it sees every connection attempt and
// remembers whether the last one was refused (ECONNREFUSED). Once [final]
// is called (Shutdown began), an export whose connection attempt is refused
// is cancelled at once with [ErrCollectorRefused], and an export that starts
// while the last attempt was refused is not attempted when one more quick
// connection attempt is refused too.
//
// It also watches the TLS handshakes of the exporter (its transport
// credentials, see [RefusalGuard.Credentials]): a handshake that fails for
// a certificate or protocol reason (the server's certificate is not
// trusted or not for its name, the server speaks plain text, it rejects
// the client certificate) cancels the exports in progress at once, in
// every mode, with [ErrTLSHandshake] and the cause; an export that starts
// while the last handshake failed that way first makes one quick handshake
// of its own and is not attempted when that fails too. gRPC retries such a
// connection until the export's deadline and then reports only "context
// deadline exceeded".
//
// Every error of [RefusalGuard.Export] is shaped by [ShapeError] with the
// guard's secrets.
type RefusalGuard struct {
	dialer  net.Dialer
	secrets []string

	mu          sync.Mutex
	isFinal     bool
	lastRefused error  // the last attempt's refusal, nil after a success
	lastAddr    string // the address of the last attempt
	lastTLS     error  // the last handshake's TLS problem, nil after a success
	authority   string // the server name of the last handshake
	creds       credentials.TransportCredentials
	plain       bool // creds are plain text (insecure)
	inflight    map[*exportCall]struct{}
	endpoint    endpointWatch // the endpoint and what its failures told (endpointcause.go)
}

type exportCall struct{ cancel context.CancelCauseFunc }

// NewRefusalGuard returns a guard for one OTLP exporter whose export
// errors never show secrets (the header values, Settings.Secrets). A nil
// *RefusalGuard runs every export as it is.
func NewRefusalGuard(secrets []string) *RefusalGuard {
	return &RefusalGuard{secrets: secrets, inflight: map[*exportCall]struct{}{}}
}

// dial is the gRPC context dialer: addr is "host:port", or "unix:PATH" for
// Unix sockets (as gRPC passes them to a custom dialer).
func (g *RefusalGuard) dial(ctx context.Context, addr string) (net.Conn, error) {
	network, address := "tcp", addr
	if rest, ok := strings.CutPrefix(addr, "unix:"); ok {
		network, address = "unix", rest
	}
	conn, err := g.dialer.DialContext(ctx, network, address)
	g.mu.Lock()
	g.lastAddr = addr
	if err != nil && errors.Is(err, syscall.ECONNREFUSED) {
		g.lastRefused = fmt.Errorf("%w: %w", ErrCollectorRefused, err)
		if g.isFinal {
			for c := range g.inflight {
				c.cancel(g.lastRefused)
			}
		}
	} else if err == nil {
		g.lastRefused = nil
	}
	g.mu.Unlock()
	return conn, err
}

// Final switches the guard to final mode (Shutdown began).
func (g *RefusalGuard) Final() {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.isFinal = true
	g.mu.Unlock()
}

// Export runs fn. In final mode it is cancelled with ErrCollectorRefused as
// soon as a connection attempt is refused, and not run at all when the last
// attempt was refused and a quick new attempt is refused too (OTLP/HTTP
// exporters, which do not retry a refused connection, never dial through
// the guard). In every mode, and for a nil guard (a caller's or the console
// exporter), an error of fn caused by a refused connection wraps
// ErrCollectorRefused.
//
// A TLS handshake that fails for a certificate or protocol reason cancels
// fn at once, in every mode, with ErrTLSHandshake; when the last handshake
// failed that way, one quick handshake is made first and fn is not run
// when it fails too. Every error is shaped by [ShapeError].
//
// When the collector's success answer arrived (Lens's OTLP/HTTP client and
// OTLP/gRPC interceptor see it, see response.go), the export succeeded: the
// error is nil, or a *[RejectedError] when the answer was a partial success
// (the exporters return it as an error); a 2xx answer that is not an OTLP
// response fails with [ErrNotOTLP].
func (g *RefusalGuard) Export(ctx context.Context, fn func(context.Context) error) error {
	if g == nil {
		return ShapeError(refusedError(answered(ctx, fn)), nil)
	}
	return ShapeError(g.export(ctx, fn), g.secrets)
}

func (g *RefusalGuard) export(ctx context.Context, fn func(context.Context) error) error {
	g.mu.Lock()
	final, refused, badTLS, addr := g.isFinal, g.lastRefused, g.lastTLS, g.lastAddr
	g.mu.Unlock()
	if final && refused != nil {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		conn, err := g.dial(pctx, addr)
		cancel()
		if err == nil {
			conn.Close()
		} else if errors.Is(err, syscall.ECONNREFUSED) {
			return g.refusal()
		}
	}
	if badTLS != nil {
		if err := g.probeTLS(ctx); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	call := &exportCall{cancel: cancel}
	g.mu.Lock()
	g.inflight[call] = struct{}{}
	g.mu.Unlock()
	err := answered(ctx, fn)
	g.mu.Lock()
	delete(g.inflight, call)
	g.mu.Unlock()
	if cause := context.Cause(ctx); err != nil && (errors.Is(cause, ErrCollectorRefused) || errors.Is(cause, ErrTLSHandshake) || isEndpointCause(cause)) {
		return cause
	}
	return g.explain(refusedError(err))
}

// refusedError wraps ErrCollectorRefused around an error caused by a refused
// connection (ECONNREFUSED) that does not wrap it yet.
func refusedError(err error) error {
	if err == nil || !errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, ErrCollectorRefused) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrCollectorRefused, err)
}

func (g *RefusalGuard) refusal() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.lastRefused != nil {
		return g.lastRefused
	}
	return ErrCollectorRefused
}
