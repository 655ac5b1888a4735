package telemetry

import "testing"

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
