package telemetry

import (
	"crypto/tls"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/nemolens/lens-go/environ"
)

// TestOptionsTimeoutOnlyWhenSet: an exporter gets a timeout option only for
// a positive Signal.Timeout; 0 lets it read its variable itself
// (docs/testing.md#mutation; otlp.go, `sig.Timeout > 0` as >= and as <=,
// for OTLP/HTTP and for OTLP/gRPC).
func TestOptionsTimeoutOnlyWhenSet(t *testing.T) {
	t.Parallel()
	h := HTTPOptions[string]{
		Timeout:     func(d time.Duration) string { return "timeout=" + d.String() },
		EndpointURL: func(u string) string { return "url=" + u },
		TLS:         func(*tls.Config) string { return "tls" },
	}
	g := GRPCOptions[string]{
		Endpoint:       func(e string) string { return "endpoint=" + e },
		TLSCredentials: func(credentials.TransportCredentials) string { return "credentials" },
		Timeout:        func(d time.Duration) string { return "timeout=" + d.String() },
		DialOptions:    func(...grpc.DialOption) string { return "dial" },
	}
	for _, tc := range []struct {
		timeout time.Duration
		want    string
	}{{0, ""}, {5 * time.Second, "timeout=5s"}} {
		sig := Signal{Endpoint: "collector:4317", Timeout: tc.timeout}
		for name, opts := range map[string][]string{"http": h.For(sig), "grpc": g.For(sig, nil)} {
			i := slices.IndexFunc(opts, func(o string) bool { return strings.HasPrefix(o, "timeout=") })
			got := ""
			if i >= 0 {
				got = opts[i]
			}
			if got != tc.want {
				t.Errorf("%s, Timeout %v: options %q, want timeout option %q", name, tc.timeout, opts, tc.want)
			}
		}
	}
}

// TestHeaderSecretsAfterAPairWithoutValue: a header pair without '=' does
// not end the list: the values after it are still secrets (endpoint.go,
// headerSecrets: continue as break left them out, and an export error
// could show them).
func TestHeaderSecretsAfterAPairWithoutValue(t *testing.T) {
	t.Parallel()
	got := headerSecrets(environ.Map{"OTEL_EXPORTER_OTLP_HEADERS": "junk,authorization=Bearer%20s3cr3t-t0ken"})
	if !slices.Contains(got, "Bearer s3cr3t-t0ken") || !slices.Contains(got, "s3cr3t-t0ken") {
		t.Errorf("headerSecrets = %q, want the decoded value and its long word", got)
	}
}
