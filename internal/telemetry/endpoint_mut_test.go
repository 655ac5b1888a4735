package telemetry

import (
	"errors"
	"strings"
	"testing"

	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/collectortest"
)

// TestEndpointURL: a HOST:PORT gRPC target becomes an http:// (insecure)
// or https:// URL, a target with one of gRPC's schemes has none
// (docs/testing.md#mutation; endpoint.go, `ok && grpcSchemes[...]` as ||
// gave no URL for any HOST:PORT).
func TestEndpointURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s    Signal
		want string
		ok   bool
	}{
		{Signal{Endpoint: "collector:4317", Insecure: true}, "http://collector:4317", true},
		{Signal{Endpoint: "collector:4317"}, "https://collector:4317", true},
		{Signal{Endpoint: "[::1]:4317", Insecure: true}, "http://[::1]:4317", true},
		{Signal{Endpoint: "dns:///collector:4317"}, "", false},
		{Signal{Endpoint: "UNIX:/run/otel.sock", Insecure: true}, "", false},
		{Signal{Endpoint: "passthrough:///collector:4317"}, "", false},
	} {
		if got, ok := tc.s.EndpointURL(); got != tc.want || ok != tc.ok {
			t.Errorf("EndpointURL(%+v) = %q, %v; want %q, %v", tc.s, got, ok, tc.want, tc.ok)
		}
	}
}

// TestValidPort: ports 1 to 65535 are valid, 0 and 65536 are not
// (endpoint.go, validPort: `n > 0` as >=, `n < 1<<16` as <=, and the first
// && as ||, which took 0 and negative ports).
func TestValidPort(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{"1": true, "4317": true, "65535": true, "0": false, "-1": false, "65536": false, "x": false, "": false} {
		if got := validPort(p); got != want {
			t.Errorf("validPort(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestGRPCEndpointNeedsAHost: a gRPC HOST:PORT without a host is an
// invalid endpoint (endpoint.go, `serr != nil || host == ""` as && took
// ":4317").
func TestGRPCEndpointNeedsAHost(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{":4317", " :4317 "} {
		if target, _, err := grpcEndpoint(raw, true); !errors.Is(err, ErrInvalidEndpoint) || target != DefaultGRPCEndpoint {
			t.Errorf("grpcEndpoint(%q) = %q, %v; want ErrInvalidEndpoint and the default", raw, target, err)
		}
	}
}

// TestHTTPEndpointNamesTheScheme: a URL with a host and another scheme is
// refused naming that scheme; text that is no URL with a host is "not a
// URL" (endpoint.go, httpEndpoint: each of the four conditions of the
// scheme reason negated).
func TestHTTPEndpointNamesTheScheme(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"ftp://collector:4318": `scheme "ftp"`,
		"collector:4318":       "not a URL;",
		"ftp:///v1/traces":     "not a URL;",
	} {
		_, err := httpEndpoint(raw, "traces", false)
		if !errors.Is(err, ErrInvalidEndpoint) || !strings.Contains(err.Error(), ": "+want) {
			t.Errorf("httpEndpoint(%q): %v; want ErrInvalidEndpoint with %q", raw, err, want)
		}
	}
}

// TestTLSConfigOnlyWhenSet: no TLS variable gives no TLS configuration; a
// CA file alone gives one with that CA (endpoint.go, tlsConfig: the first
// two == of `caVar == "" && certVar == "" && keyVar == ""` as !=).
func TestTLSConfigOnlyWhenSet(t *testing.T) {
	t.Parallel()
	r := settingsReader{env: environ.Map{}}
	if cfg := r.tlsConfig("TRACES"); cfg != nil || len(r.errs) != 0 {
		t.Errorf("no TLS variable: %+v, %v; want none", cfg, r.errs)
	}
	cert := collectortest.NewCert(t, "ca")
	r = settingsReader{env: environ.Map{"OTEL_EXPORTER_OTLP_CERTIFICATE": cert.CertFile}}
	if cfg := r.tlsConfig("TRACES"); cfg == nil || cfg.RootCAs == nil || cfg.Certificates != nil || len(r.errs) != 0 {
		t.Errorf("CA alone: %+v, %v; want a configuration with that CA", cfg, r.errs)
	}
}
