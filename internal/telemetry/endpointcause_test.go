package telemetry

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/nemolens/lens-go/environ"
)

// unresolvable is a name under .invalid (RFC 6761: never resolves); the
// tests that need the resolver to say so skip where it does not (no DNS at
// all answers "server misbehaving", not "no such host"), except in CI.
const unresolvable = "collector.invalid"

func needNoSuchHost(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := net.DefaultResolver.LookupHost(ctx, unresolvable)
	var dns *net.DNSError
	if errors.As(err, &dns) && dns.IsNotFound {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("the resolver's answer for %s is %v, not no such host", unresolvable, err)
	}
	t.Skipf("skipping: the resolver's answer for %s is %v, not no such host", unresolvable, err)
}

// TestEndpointMistakes: each endpoint mistake of issue 38 is named with its
// variable and its cause, at once — when the settings are read where the
// value shows it (a scheme without its colon, a host with a "/"), else by
// the export, from the resolver's or gRPC's own words (a name that does not
// resolve, an HTTP/1 server behind a gRPC exporter). The export's timeouts
// are ten minutes and Shutdown's a minute: a case that waits for a
// deadline fails (on 91b90a8 every runtime case waited for it and said
// "context deadline exceeded"). Real listeners: an HTTP/1 server
// (httptest), the system's resolver. Breaks: drop schemeTypo from
// grpcEndpoint/httpEndpoint; drop the interceptor from DialOptions; drop
// the notGRPC or the lookup case of intercept; drop the DNSError case of
// explain (OTLP/HTTP names no variable then).
func TestEndpointMistakes(t *testing.T) {
	t.Parallel()
	h1 := httptest.NewServer(http.NotFoundHandler()) // HTTP/1 only, like Prometheus and OTLP/HTTP receivers
	t.Cleanup(h1.Close)
	for name, tc := range map[string]struct {
		env       environ.Map
		dns       bool     // needs the resolver's "no such host"
		readErr   error    // ReadSettings's error (nil: the export's)
		exportErr error    // the export's error
		want      []string // in the message, in order
	}{
		"grpc/scheme-without-colon": {
			env:     environ.Map{"OTEL_EXPORTER_OTLP_ENDPOINT": "http//localhost:4317"},
			readErr: ErrInvalidEndpoint,
			want:    []string{`OTEL_EXPORTER_OTLP_ENDPOINT="http//localhost:4317"`, `did you mean "http://localhost:4317"?`},
		},
		"grpc/scheme-with-one-slash": {
			env:     environ.Map{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https:/collector:4317"},
			readErr: ErrInvalidEndpoint,
			want:    []string{`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="https:/collector:4317"`, `did you mean "https://collector:4317"?`},
		},
		"grpc/host-with-slash": {
			env:     environ.Map{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector/otlp:4317"},
			readErr: ErrInvalidEndpoint,
			want:    []string{`OTEL_EXPORTER_OTLP_ENDPOINT="collector/otlp:4317"`, `the host "collector/otlp" holds a "/"`},
		},
		"http/scheme-without-colon": {
			env:     environ.Map{"OTEL_EXPORTER_OTLP_PROTOCOL": ProtocolHTTPProtobuf, "OTEL_EXPORTER_OTLP_ENDPOINT": "http//localhost:4318"},
			readErr: ErrInvalidEndpoint,
			want:    []string{`OTEL_EXPORTER_OTLP_ENDPOINT="http//localhost:4318"`, `did you mean "http://localhost:4318"?`},
		},
		"grpc/no-such-host": {
			env:       environ.Map{"OTEL_EXPORTER_OTLP_ENDPOINT": unresolvable + ":4317"},
			dns:       true,
			exportErr: ErrNoSuchHost,
			want:      []string{`OTEL_EXPORTER_OTLP_ENDPOINT="collector.invalid:4317"`, "its host does not resolve", "no such host"},
		},
		"grpc/no-such-host-url": {
			env:       environ.Map{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://" + unresolvable + ":4317"},
			dns:       true,
			exportErr: ErrNoSuchHost,
			want:      []string{`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="http://collector.invalid:4317"`, "no such host"},
		},
		"http/no-such-host": {
			env:       environ.Map{"OTEL_EXPORTER_OTLP_PROTOCOL": ProtocolHTTPProtobuf, "OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + unresolvable + ":4318"},
			dns:       true,
			exportErr: ErrNoSuchHost,
			want:      []string{`OTEL_EXPORTER_OTLP_ENDPOINT="http://collector.invalid:4318"`, "no such host"},
		},
		"grpc/http1-server": {
			env:       environ.Map{"OTEL_EXPORTER_OTLP_ENDPOINT": h1.URL},
			exportErr: ErrNotGRPC,
			want:      []string{`OTEL_EXPORTER_OTLP_ENDPOINT="` + h1.URL + `"`, "does not speak gRPC", "http2: frame too large", "set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf"},
		},
		"grpc/http1-server-otlp-http-path": {
			env:       environ.Map{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": h1.URL + "/api/v1/otlp/v1/traces"},
			exportErr: ErrNotGRPC,
			want:      []string{`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="` + h1.URL + `/api/v1/otlp/v1/traces"`, "http2: frame too large", "set OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if tc.dns {
				needNoSuchHost(t)
			}
			var err error
			if tc.readErr != nil {
				_, err = ReadSettings(tc.env, Config{}, Needs{Traces: true})
				var ce *ConfigError
				if !errors.Is(err, tc.readErr) || !errors.As(err, &ce) {
					t.Fatalf("ReadSettings = %v, want a *ConfigError wrapping %v", err, tc.readErr)
				}
			} else {
				err = exportOneWithin(t, tc.env, time.Minute)
				var ee *EndpointError
				if !errors.Is(err, tc.exportErr) || !errors.As(err, &ee) || errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("Shutdown = %v, want an *EndpointError wrapping %v, no deadline", err, tc.exportErr)
				}
			}
			msg := err.Error()
			for _, w := range tc.want {
				i := strings.Index(msg, w)
				if i < 0 {
					t.Fatalf("the message %q does not say %q (in order: %q)", err, w, tc.want)
				}
				msg = msg[i+len(w):]
			}
		})
	}
}

// TestEndpointDeadlineNamesLastAttempt: an export that ends by its
// deadline says what the last failed call said, not the bare context
// error; one that succeeded last says nothing more. The guard's own
// contract, with a gRPC invoker that fails as an unreachable collector
// does. Breaks: return err from withLast; drop lastRPC's assignment in
// intercept.
func TestEndpointDeadlineNamesLastAttempt(t *testing.T) {
	t.Parallel()
	g := NewRefusalGuard([]string{"SECRETVALUE"})
	g.watchEndpoint(Signal{Kind: KindOTLP, Protocol: ProtocolGRPC, Endpoint: "10.0.0.1:4317", EndpointVar: "OTEL_EXPORTER_OTLP_ENDPOINT", EndpointValue: "10.0.0.1:4317"})
	unreachable := status.Error(codes.Unavailable, "connection error: dial tcp 10.0.0.1:4317: i/o timeout SECRETVALUE")
	call := func(err error) error {
		return g.intercept(context.Background(), "/x", nil, nil, nil, func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return err })
	}
	if err := call(unreachable); err != unreachable {
		t.Fatalf("intercept = %v, want the call's own error", err)
	}
	got := g.DeadlineCause(context.DeadlineExceeded)
	if !errors.Is(got, context.DeadlineExceeded) || !strings.Contains(got.Error(), "the last attempt: rpc error: code = Unavailable desc = connection error: dial tcp 10.0.0.1:4317: i/o timeout") {
		t.Errorf("DeadlineCause = %v, want the deadline with the last attempt", got)
	}
	if strings.Contains(got.Error(), "SECRETVALUE") {
		t.Errorf("DeadlineCause shows a secret: %v", got)
	}
	_ = call(nil)
	if got := g.DeadlineCause(context.DeadlineExceeded); got.Error() != context.DeadlineExceeded.Error() {
		t.Errorf("after a success, DeadlineCause = %v, want the bare deadline", got)
	}
}
