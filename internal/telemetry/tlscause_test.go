package telemetry

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/collectortest"
)

// exportOneWithin is exportOne with a bound on Shutdown (0: none): the
// export and its timeout are ten minutes, so the error must come from the
// guard.
func exportOneWithin(t *testing.T, env environ.Map, within time.Duration) error {
	t.Helper()
	s, err := ReadSettings(env, Config{}, Needs{Traces: true})
	if err != nil {
		t.Fatalf("ReadSettings: %v", err)
	}
	s.BSPExportTimeout, s.Traces.Timeout = 10*time.Minute, 10*time.Minute
	tr, err := NewTracing(context.Background(), resource.Empty(), &s, TracingOptions{Env: environ.Map{}})
	if err != nil {
		t.Fatalf("NewTracing: %v", err)
	}
	_, span := tr.Provider().Tracer("test").Start(context.Background(), "step")
	span.End()
	ctx := context.Background()
	if within > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, within)
		defer cancel()
	}
	return tr.Shutdown(ctx)
}

// TestGRPCTLSCauses: over gRPC, mTLS without the client certificate the
// collector requires, and an http:// (plain text) endpoint in front of a
// collector that speaks TLS, end the export with their cause, not with the
// flush timeout's "context deadline exceeded" (on 85caa10 both waited for
// the deadline). Breaks: return the TLS connection unwatched from
// watchedCreds.ClientHandshake (return out, info, err); drop the
// speaksTLS case of afterHandshake.
func TestGRPCTLSCauses(t *testing.T) {
	t.Parallel()
	server := collectortest.NewCert(t, "collector")
	client := collectortest.NewCert(t, "client")
	t.Run("mtls-without-client-certificate", func(t *testing.T) {
		t.Parallel()
		c := collectortest.NewTLS(t, ProtocolGRPC, collectortest.OK, server.ServerConfig(&client))
		err := exportOneWithin(t, environ.Map{
			"OTEL_EXPORTER_OTLP_PROTOCOL":    ProtocolGRPC,
			"OTEL_EXPORTER_OTLP_ENDPOINT":    c.Endpoint,
			"OTEL_EXPORTER_OTLP_CERTIFICATE": server.CertFile,
		}, time.Minute)
		if !errors.Is(err, ErrTLSHandshake) || !strings.Contains(err.Error(), "certificate") || errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Shutdown = %v, want ErrTLSHandshake naming the certificate", err)
		}
	})
	t.Run("plain-text-to-tls", func(t *testing.T) {
		t.Parallel()
		c := collectortest.NewTLS(t, ProtocolGRPC, collectortest.OK, server.ServerConfig(nil))
		err := exportOneWithin(t, environ.Map{
			"OTEL_EXPORTER_OTLP_PROTOCOL": ProtocolGRPC,
			"OTEL_EXPORTER_OTLP_ENDPOINT": strings.Replace(c.Endpoint, "https://", "http://", 1),
		}, time.Minute)
		if !errors.Is(err, ErrCollectorSpeaksTLS) || errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Shutdown = %v, want ErrCollectorSpeaksTLS", err)
		}
	})
}
