package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"google.golang.org/grpc"
)

// Causes of an export that an endpoint mistake makes fail, each the reason
// of an *EndpointError naming the endpoint's variable
// (docs/resource.md#endpoint-causes).
var (
	// ErrNoSuchHost: the endpoint's host name does not resolve (the
	// resolver's answer is "no such host").
	ErrNoSuchHost = errors.New("its host does not resolve")
	// ErrNotGRPC: an OTLP/gRPC exporter's endpoint answered in HTTP/1 (an
	// OTLP/HTTP receiver, Prometheus, a web server): gRPC reads the
	// status line as an HTTP/2 frame, "http2: frame too large".
	ErrNotGRPC = errors.New("the endpoint does not speak gRPC")
)

// EndpointError is the error of an export that failed because of its
// endpoint: it names the variable the endpoint was read from, its value
// (URL credentials and query masked) and the cause, which wraps the
// exporter's or the resolver's own error.
type EndpointError struct {
	Var   string // OTEL_EXPORTER_OTLP_ENDPOINT or a signal's; "" for the default endpoint
	Value string // the value as written, or the default endpoint
	Err   error  // ErrNoSuchHost or ErrNotGRPC, wrapping the cause
}

func (e *EndpointError) Error() string {
	if e.Var == "" {
		return fmt.Sprintf("the default endpoint %q (OTEL_EXPORTER_OTLP_ENDPOINT is not set): %v", e.Value, e.Err)
	}
	return fmt.Sprintf("%s=%q: %v", e.Var, maskUserinfo(hideQuery(strings.TrimSpace(e.Value))), e.Err)
}

// Unwrap returns the cause.
func (e *EndpointError) Unwrap() error { return e.Err }

// schemeTypo refuses an endpoint whose scheme lost its colon or a slash
// (http//host:4317, https:/host): gRPC would take "http//host" for a host
// name and OTLP/HTTP finds no URL, and both would say so only after the
// export timeout.
func schemeTypo(v string) error {
	lower := strings.ToLower(v)
	for _, scheme := range [...]string{"https", "http"} {
		rest, ok := strings.CutPrefix(lower, scheme)
		if !ok {
			continue
		}
		fix := ""
		switch {
		case strings.HasPrefix(rest, "//"):
			fix = scheme + "://" + v[len(scheme)+2:]
		case strings.HasPrefix(rest, ":/") && !strings.HasPrefix(rest, "://"):
			fix = scheme + "://" + v[len(scheme)+2:]
		}
		if fix != "" {
			return fmt.Errorf("%w: the scheme is not followed by \"://\" (did you mean %q?)", ErrInvalidEndpoint, maskUserinfo(hideQuery(fix)))
		}
	}
	return nil
}

// endpointWatch is what a guard knows of its exporter's endpoint; its
// fields after sig are guarded by the guard's mu.
type endpointWatch struct {
	sig  Signal
	host string // the DNS name to look up when resolution fails ("" : none)

	lastRPC error // the last failed export call's error (gRPC)
	cause   error // the last *EndpointError found, nil after a success
}

// watchEndpoint tells g the endpoint of its exporter.
func (g *RefusalGuard) watchEndpoint(sig Signal) {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.endpoint = endpointWatch{sig: sig, host: endpointHost(sig)}
	g.mu.Unlock()
}

// endpointHost returns the host name of sig's endpoint, "" when it is an
// IP address, a unix socket or a target of another gRPC scheme.
func endpointHost(sig Signal) string {
	host := ""
	if sig.Protocol == ProtocolHTTPProtobuf {
		if u, err := url.Parse(sig.Endpoint); err == nil {
			host = u.Hostname()
		}
	} else {
		t := sig.Endpoint
		if rest, ok := strings.CutPrefix(strings.ToLower(t), "dns:"); ok {
			t = t[len(t)-len(rest):]
			if a, ok := strings.CutPrefix(t, "//"); ok {
				_, t, _ = strings.Cut(a, "/") // dns://AUTHORITY/host:port
			}
		} else if strings.Contains(t, ":/") || strings.HasPrefix(strings.ToLower(t), "unix") || strings.HasPrefix(strings.ToLower(t), "passthrough:") {
			return ""
		}
		if h, _, err := net.SplitHostPort(t); err == nil {
			host = h
		} else {
			host = t
		}
	}
	if host == "" || net.ParseIP(host) != nil {
		return ""
	}
	return host
}

func (w *endpointWatch) fail(cause error) *EndpointError {
	v, name := w.sig.EndpointValue, w.sig.EndpointVar
	if name == "" {
		v = w.sig.Endpoint
		if v == "" {
			v = "http://localhost:4318"
		}
	}
	return &EndpointError{Var: name, Value: v, Err: cause}
}

// protocolVar is the protocol variable that goes with the endpoint's.
func (w *endpointWatch) protocolVar() string {
	if s, ok := strings.CutSuffix(w.sig.EndpointVar, "_ENDPOINT"); ok && s != "OTEL_EXPORTER_OTLP" {
		return s + "_PROTOCOL"
	}
	return "OTEL_EXPORTER_OTLP_PROTOCOL"
}

// notGRPC is the cause of err when its text says that the server answered
// in HTTP/1, else nil.
func (w *endpointWatch) notGRPC(err error) error {
	if err == nil || !strings.Contains(err.Error(), "http2: frame too large") {
		return nil
	}
	return w.fail(&causeError{ErrNotGRPC, "an HTTP/1 server answered: http2: frame too large; for OTLP/HTTP set " + w.protocolVar() + "=http/protobuf", err})
}

// causeError is a cause (ErrNoSuchHost, ErrNotGRPC) with the words of the
// error that shows it (the resolver's "no such host", not the exporter's
// text around it), wrapping both.
type causeError struct {
	cause error
	shown string
	err   error
}

func (e *causeError) Error() string   { return e.cause.Error() + ": " + e.shown }
func (e *causeError) Unwrap() []error { return []error{e.cause, e.err} }

// noSuchHost is the cause of err, which holds dns.
func (w *endpointWatch) noSuchHost(dns *net.DNSError, err error) error {
	return w.fail(&causeError{ErrNoSuchHost, dns.Error(), err})
}

// intercept is the gRPC exporter's unary interceptor: it keeps the last
// failed call's error, and turns the failures whose cause is known into
// that cause, at once: a server that answered in HTTP/1 (ErrNotGRPC), a
// name the resolver does not know (ErrNoSuchHost, looked up here when
// gRPC's resolver found no address). The exports in progress are
// cancelled with it, in every mode: retrying cures neither.
func (g *RefusalGuard) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	g.mu.Lock()
	w := g.endpoint
	g.mu.Unlock()
	var cause error
	switch {
	case err == nil:
	case w.notGRPC(err) != nil:
		cause = w.notGRPC(err)
	case w.host != "" && strings.Contains(err.Error(), "name resolver error"):
		lctx, cancel := context.WithTimeout(ctx, probeTimeout)
		_, lerr := net.DefaultResolver.LookupHost(lctx, w.host)
		cancel()
		var dns *net.DNSError
		if errors.As(lerr, &dns) && dns.IsNotFound {
			cause = w.noSuchHost(dns, lerr)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.endpoint.lastRPC, g.endpoint.cause = err, cause
	if cause != nil {
		for c := range g.inflight {
			c.cancel(cause)
		}
		return cause
	}
	return err
}

// isEndpointCause reports whether the cause of a cancelled export is an
// endpoint's.
func isEndpointCause(cause error) bool {
	var e *EndpointError
	return errors.As(cause, &e)
}

// explain names the endpoint in an export error whose cause it knows: a
// host that does not resolve (OTLP/HTTP's client says "no such host" at
// once), a server that answered in HTTP/1; and adds the last failed call's
// error to a bare deadline (gRPC retries until the deadline, and the
// context's error says nothing of why).
func (g *RefusalGuard) explain(err error) error {
	if err == nil || isEndpointCause(err) {
		return err
	}
	g.mu.Lock()
	w := g.endpoint
	g.mu.Unlock()
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns) && dns.IsNotFound:
		return w.noSuchHost(dns, err)
	case w.notGRPC(err) != nil:
		return w.notGRPC(err)
	}
	return w.withLast(err)
}

// withLast adds the last failed call's error to a bare deadline.
func (w *endpointWatch) withLast(err error) error {
	if w.lastRPC == nil || !errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), w.lastRPC.Error()) {
		return err
	}
	return fmt.Errorf("%w (the last attempt: %v)", err, w.lastRPC)
}

// DeadlineCause returns err, a shutdown's deadline, with what the guard
// knows of why its exports did not end: the endpoint's cause, else the
// last failed call's error. A nil guard returns err.
func (g *RefusalGuard) DeadlineCause(err error) error {
	if g == nil || err == nil {
		return err
	}
	g.mu.Lock()
	w := g.endpoint
	g.mu.Unlock()
	if w.cause != nil {
		return errors.Join(w.cause, err)
	}
	return ShapeError(w.withLast(err), g.secrets)
}
