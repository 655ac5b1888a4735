package main

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

	"github.com/nemolens/lens-go/internal/faulttest"
)

// TestEndpointMistakesCLI: lens exec and lens emit-spans name the endpoint
// variable, its value and the cause of each endpoint mistake of issue 38,
// in one line, without waiting for their flush timeout (ten minutes here:
// a case that waits fails by the test's own deadline, and the line would
// say "context deadline exceeded"): a scheme without its colon (telemetry
// disabled at once, without the doubled "lens: " of 91b90a8), a name that
// does not resolve, a gRPC exporter in front of an HTTP/1 server (httptest,
// as Prometheus's OTLP receiver). lens exec's status stays the command's.
func TestEndpointMistakesCLI(t *testing.T) {
	t.Parallel()
	h1 := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(h1.Close)
	resolves := func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := net.DefaultResolver.LookupHost(ctx, "collector.invalid")
		var dns *net.DNSError
		return errors.As(err, &dns) && dns.IsNotFound
	}
	for name, tc := range map[string]struct {
		endpoint, protocol string
		dns                bool
		exec, emit         string // the line's start
		want               []string
	}{
		"scheme-without-colon": {
			endpoint: "http//localhost:4317",
			exec:     `lens exec: telemetry disabled: OTEL_EXPORTER_OTLP_ENDPOINT="http//localhost:4317": `,
			emit:     `lens emit-spans: configuration: OTEL_EXPORTER_OTLP_ENDPOINT="http//localhost:4317": `,
			want:     []string{`did you mean "http://localhost:4317"?`},
		},
		"no-such-host/grpc": {
			endpoint: "collector.invalid:4317", dns: true,
			exec: `lens exec: telemetry shutdown: OTEL_EXPORTER_OTLP_ENDPOINT="collector.invalid:4317": `,
			emit: `lens emit-spans: export: 0 of 1 spans exported (1 failed, 0 dropped, 0 rejected): OTEL_EXPORTER_OTLP_ENDPOINT="collector.invalid:4317": `,
			want: []string{"its host does not resolve", "no such host"},
		},
		"no-such-host/http": {
			endpoint: "http://collector.invalid:4318", protocol: "http/protobuf", dns: true,
			exec: `lens exec: telemetry shutdown: OTEL_EXPORTER_OTLP_ENDPOINT="http://collector.invalid:4318": `,
			emit: `lens emit-spans: export: 0 of 1 spans exported (1 failed, 0 dropped, 0 rejected): OTEL_EXPORTER_OTLP_ENDPOINT="http://collector.invalid:4318": `,
			want: []string{"its host does not resolve", "no such host"},
		},
		"grpc-to-http1": {
			endpoint: h1.URL + "/api/v1/otlp",
			exec:     `lens exec: telemetry shutdown: OTEL_EXPORTER_OTLP_ENDPOINT="` + h1.URL + `/api/v1/otlp": `,
			emit:     `lens emit-spans: export: 0 of 1 spans exported (1 failed, 0 dropped, 0 rejected): OTEL_EXPORTER_OTLP_ENDPOINT="` + h1.URL + `/api/v1/otlp": `,
			want:     []string{"the endpoint does not speak gRPC", "http2: frame too large", "for OTLP/HTTP set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if tc.dns && !resolves() {
				if os.Getenv("CI") == "true" {
					t.Fatal("the resolver does not say no such host for collector.invalid")
				}
				t.Skip("skipping: the resolver does not say no such host for collector.invalid")
			}
			protocol := tc.protocol
			if protocol == "" {
				protocol = "grpc"
			}
			env := telemetryEnv(tc.endpoint, protocol, map[string]string{helperEnvName: "exit=3"})
			check := func(r result, start string) {
				t.Helper()
				l := faulttest.Lines(r.stderr)
				if len(l) != 1 || !strings.HasPrefix(l[0], start) {
					t.Fatalf("stderr %q, want one line starting %q", r.stderr, start)
				}
				rest := l[0][len(start):]
				for _, w := range tc.want {
					i := strings.Index(rest, w)
					if i < 0 {
						t.Fatalf("%q does not say %q (in order: %q)", l[0], w, tc.want)
					}
					rest = rest[i+len(w):]
				}
				if strings.Contains(l[0], "deadline") || strings.Contains(l[0], ": lens: ") {
					t.Errorf("%q: a deadline, or the library's prefix after the command's", l[0])
				}
			}
			r := runBin(t, env, "", "exec", "--flush-timeout", "10m", "--", self(t))
			if r.code != 3 {
				t.Errorf("lens exec: %v, want the command's exit 3", r)
			}
			check(r, tc.exec)
			r = runBin(t, env, "", "emit-spans", "--flush-timeout", "10m", "--span", "step,1700000000,1700000001")
			if r.code != 1 {
				t.Errorf("lens emit-spans: %v, want exit 1", r)
			}
			check(r, tc.emit)
		})
	}
}
