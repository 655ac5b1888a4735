package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/collectortest"
)

// Tests of the OTLP connection settings Lens reads itself (endpoint,
// insecure, TLS files; docs/resource.md#otlp-endpoint-and-tls) and of the
// TLS handshake guard, against real OTLP receivers (internal/collectortest)
// with certificates made for each test.

var allNeeds = Needs{Traces: true, Metrics: true, Logs: true}

func signalOf(s Settings, signal string) Signal {
	switch signal {
	case SignalMetrics:
		return s.Metrics
	case SignalLogs:
		return s.Logs
	}
	return s.Traces
}

// TestEndpointSettings: how an endpoint value becomes the target of each
// signal, over both protocols, generic and signal-specific variables.
func TestEndpointSettings(t *testing.T) {
	t.Parallel()
	for _, signal := range []string{SignalTraces, SignalMetrics, SignalLogs} {
		specific := "OTEL_EXPORTER_OTLP_" + signal + "_ENDPOINT"
		lower := strings.ToLower(signal)
		for _, tc := range []struct {
			name     string
			env      environ.Map
			endpoint string
			insecure bool
		}{
			{"grpc default", environ.Map{}, "localhost:4317", false},
			{"grpc default insecure", environ.Map{"OTEL_EXPORTER_OTLP_INSECURE": "TRUE"}, "localhost:4317", true},
			{"grpc ip:port", environ.Map{"OTEL_EXPORTER_OTLP_ENDPOINT": "127.0.0.1:4317"}, "127.0.0.1:4317", false},
			{"grpc ip:port insecure", environ.Map{"OTEL_EXPORTER_OTLP_ENDPOINT": " 127.0.0.1:4317 ", "OTEL_EXPORTER_OTLP_INSECURE": "true"}, "127.0.0.1:4317", true},
			{"grpc specific insecure beats generic", environ.Map{specific: "[::1]:4317", "OTEL_EXPORTER_OTLP_INSECURE": "false", "OTEL_EXPORTER_OTLP_" + signal + "_INSECURE": "true"}, "[::1]:4317", true},
			{"grpc name:port", environ.Map{specific: "otelcol:4317", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://other:1"}, "otelcol:4317", false},
			{"grpc http scheme beats insecure=false", environ.Map{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://otelcol:4317", "OTEL_EXPORTER_OTLP_INSECURE": "false"}, "otelcol:4317", true},
			{"grpc https scheme beats insecure=true", environ.Map{"OTEL_EXPORTER_OTLP_ENDPOINT": "HTTPS://otelcol:4317/", "OTEL_EXPORTER_OTLP_INSECURE": "true"}, "otelcol:4317", false},
			{"grpc unix socket", environ.Map{specific: "unix:///run/otel.sock"}, "unix:///run/otel.sock", true},
			{"grpc dns target", environ.Map{specific: "dns:///otelcol:4317"}, "dns:///otelcol:4317", false},
			{"http generic base", environ.Map{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://otelcol:4318/base/"}, "http://otelcol:4318/base/v1/" + lower, true},
			{"http specific as is", environ.Map{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:1", specific: "https://otelcol:4318"}, "https://otelcol:4318/", false},
			{"http unset", environ.Map{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, "", false},
		} {
			t.Run(signal+"/"+tc.name, func(t *testing.T) {
				s, err := ReadSettings(tc.env, Config{}, allNeeds)
				if err != nil {
					t.Fatalf("ReadSettings: %v", err)
				}
				got := signalOf(s, signal)
				if got.Endpoint != tc.endpoint || got.Insecure != tc.insecure {
					t.Errorf("endpoint %q insecure %v, want %q %v", got.Endpoint, got.Insecure, tc.endpoint, tc.insecure)
				}
			})
		}
	}
}

// TestEndpointErrors: an endpoint Lens cannot use is one *ConfigError
// naming the variable that holds it (never the generic one in its place,
// never the default endpoint silently), once even when three signals share
// it; its message masks URL credentials.
func TestEndpointErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, protocol, value string
	}{
		{"http host:port", "http/protobuf", "127.0.0.1:4318"},
		{"http name:port", "http/protobuf", "otelcol:4318"},
		{"http other scheme", "http/protobuf", "ftp://user:SECRET@otelcol:4318"},
		{"grpc no port", "grpc", "otelcol"},
		{"grpc bad port", "grpc", "otelcol:http"},
		{"grpc other scheme", "grpc", "ftp://otelcol:4317"},
		{"grpc empty unix", "grpc", "unix:"},
		{"grpc http no host", "grpc", "http:///x"},
		{"grpc port out of range", "grpc", "http://127.0.0.1:99999"},
		{"http port out of range", "http/protobuf", "http://127.0.0.1:99999"},
		{"http unclosed bracket", "http/protobuf", "http://[::1"},
		{"grpc too many colons", "grpc", "::::"},
	} {
		for _, name := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"} {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				env := environ.Map{"OTEL_EXPORTER_OTLP_PROTOCOL": tc.protocol, name: tc.value}
				if name != "OTEL_EXPORTER_OTLP_ENDPOINT" {
					// A valid generic endpoint does not stand in for it.
					env["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://127.0.0.1:4000"
				}
				_, err := ReadSettings(env, Config{}, allNeeds)
				var ce *ConfigError
				if !errors.As(err, &ce) || ce.Var != name || !errors.Is(err, ErrInvalidEndpoint) {
					t.Fatalf("ReadSettings = %v, want a *ConfigError for %s wrapping ErrInvalidEndpoint", err, name)
				}
				if n := len(err.(interface{ Unwrap() []error }).Unwrap()); n != 1 {
					t.Errorf("%d errors, want 1: %v", n, err)
				}
				if msg := err.Error(); strings.Contains(msg, "SECRET") || strings.Contains(msg, "\n") {
					t.Errorf("message %q shows the credentials or is not one line", msg)
				}
			})
		}
	}
	// A signal that is not needed reports nothing.
	if _, err := ReadSettings(environ.Map{"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "otelcol"}, Config{}, Needs{Traces: true}); err != nil {
		t.Errorf("unneeded signal: %v", err)
	}
}

// exportOne sends one span with the settings of env (OTLP traces) through
// Lens's tracing and returns the Shutdown error. The export and flush
// timeouts are ten minutes and Shutdown's context has no deadline: an
// export that waits for a deadline hangs the test.
func exportOne(t *testing.T, env environ.Map) error {
	t.Helper()
	return exportOneWithin(t, env, 0)
}

// TestGRPCEndpointWithoutScheme: a host:port endpoint (generic or
// signal-specific, insecure from the generic or signal-specific variable)
// reaches the collector at that address.
func TestGRPCEndpointWithoutScheme(t *testing.T) {
	t.Parallel()
	for _, vars := range [][2]string{
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_INSECURE"},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_INSECURE"},
	} {
		t.Run(vars[0], func(t *testing.T) {
			t.Parallel()
			c := collectortest.NewGRPC(t, collectortest.OK)
			hostPort := strings.TrimPrefix(c.Endpoint, "http://")
			if err := exportOne(t, environ.Map{vars[0]: hostPort, vars[1]: "true"}); err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
			if n := c.Requests(collectortest.Traces); n != 1 {
				t.Errorf("the collector at %s got %d trace exports, want 1", hostPort, n)
			}
		})
	}
}

// writeFile writes data to a new file in the test's directory.
func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTLSFileErrors: a CA, client certificate or client key file that
// cannot be read or holds no usable PEM data is a *ConfigError naming its
// variable (the signal-specific one when that is the one set), over both
// protocols, when the settings are read.
func TestTLSFileErrors(t *testing.T) {
	t.Parallel()
	cert := collectortest.NewCert(t, "client")
	other := collectortest.NewCert(t, "other")
	garbage := writeFile(t, "garbage.pem", "<html>not a certificate</html>\n")
	missing := filepath.Join(t.TempDir(), "missing.pem")
	for _, tc := range []struct {
		name    string
		env     environ.Map
		varName string
		reason  string
	}{
		{"garbage CA", environ.Map{"OTEL_EXPORTER_OTLP_CERTIFICATE": garbage}, "OTEL_EXPORTER_OTLP_CERTIFICATE", "no PEM certificate"},
		{"missing CA", environ.Map{"OTEL_EXPORTER_OTLP_CERTIFICATE": missing}, "OTEL_EXPORTER_OTLP_CERTIFICATE", "no such file"},
		{"signal CA", environ.Map{"OTEL_EXPORTER_OTLP_CERTIFICATE": cert.CertFile, "OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE": garbage}, "OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE", "no PEM certificate"},
		{"key as CA", environ.Map{"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": cert.KeyFile}, "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", "no PEM certificate"},
		{"garbage key", environ.Map{"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": cert.CertFile, "OTEL_EXPORTER_OTLP_CLIENT_KEY": garbage}, "OTEL_EXPORTER_OTLP_CLIENT_KEY", "no PEM private key"},
		{"garbage client cert", environ.Map{"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": garbage, "OTEL_EXPORTER_OTLP_CLIENT_KEY": cert.KeyFile}, "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", "no PEM certificate"},
		{"key of another cert", environ.Map{"OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE": cert.CertFile, "OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY": other.KeyFile}, "OTEL_EXPORTER_OTLP_METRICS_CLIENT_KEY", "does not go with"},
		{"cert without key", environ.Map{"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": cert.CertFile}, "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", "needs its key"},
	} {
		for _, protocol := range []string{ProtocolGRPC, ProtocolHTTPProtobuf} {
			t.Run(tc.name+"/"+protocol, func(t *testing.T) {
				env := environ.Map{"OTEL_EXPORTER_OTLP_PROTOCOL": protocol}
				for k, v := range tc.env {
					env[k] = v
				}
				_, err := ReadSettings(env, Config{}, allNeeds)
				var ce *ConfigError
				if !errors.As(err, &ce) || ce.Var != tc.varName || !errors.Is(err, ErrTLSFile) {
					t.Fatalf("ReadSettings = %v, want a *ConfigError for %s wrapping ErrTLSFile", err, tc.varName)
				}
				if !strings.Contains(err.Error(), tc.reason) {
					t.Errorf("error %q does not say %q", err, tc.reason)
				}
				if n := len(err.(interface{ Unwrap() []error }).Unwrap()); n != 1 {
					t.Errorf("%d errors, want 1: %v", n, err)
				}
			})
		}
	}
}

// TestTLSExports: exports over TLS, gRPC and HTTP, against collectors with
// a certificate made for the test: a trusted CA file (and a client
// certificate the collector requires) exports; an untrusted one fails with
// the certificate problem, at once (the timeouts are ten minutes and
// Shutdown's context has none); over gRPC a collector that speaks plain
// text fails the handshake with its cause too.
func TestTLSExports(t *testing.T) {
	t.Parallel()
	server := collectortest.NewCert(t, "collector")
	client := collectortest.NewCert(t, "client")
	stranger := collectortest.NewCert(t, "stranger")
	for _, protocol := range []string{ProtocolGRPC, ProtocolHTTPProtobuf} {
		t.Run(protocol+"/trusted", func(t *testing.T) {
			t.Parallel()
			c := collectortest.NewTLS(t, protocol, collectortest.OK, server.ServerConfig(&client))
			err := exportOne(t, environ.Map{
				"OTEL_EXPORTER_OTLP_PROTOCOL":                  protocol,
				"OTEL_EXPORTER_OTLP_ENDPOINT":                  c.Endpoint,
				"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE":        server.CertFile,
				"OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE": client.CertFile,
				"OTEL_EXPORTER_OTLP_CLIENT_KEY":                client.KeyFile,
			})
			if err != nil || c.Requests(collectortest.Traces) != 1 {
				t.Errorf("Shutdown = %v, %d trace exports; want nil, 1", err, c.Requests(collectortest.Traces))
			}
		})
		t.Run(protocol+"/untrusted", func(t *testing.T) {
			t.Parallel()
			c := collectortest.NewTLS(t, protocol, collectortest.OK, server.ServerConfig(nil))
			err := exportOne(t, environ.Map{
				"OTEL_EXPORTER_OTLP_PROTOCOL":    protocol,
				"OTEL_EXPORTER_OTLP_ENDPOINT":    c.Endpoint,
				"OTEL_EXPORTER_OTLP_CERTIFICATE": stranger.CertFile,
			})
			if err == nil || !strings.Contains(err.Error(), "certificate") {
				t.Errorf("Shutdown = %v, want the certificate problem", err)
			}
			if protocol == ProtocolGRPC && !errors.Is(err, ErrTLSHandshake) {
				t.Errorf("Shutdown = %v, want ErrTLSHandshake", err)
			}
		})
	}
	t.Run("grpc/plaintext-server", func(t *testing.T) {
		t.Parallel()
		c := collectortest.NewGRPC(t, collectortest.OK)
		err := exportOne(t, environ.Map{"OTEL_EXPORTER_OTLP_ENDPOINT": strings.TrimPrefix(c.Endpoint, "http://")})
		if !errors.Is(err, ErrTLSHandshake) {
			t.Errorf("Shutdown = %v, want ErrTLSHandshake", err)
		}
	})
}

// TestTLSGuardNextExport: after a handshake failed for a certificate
// problem, the next export makes one handshake of its own and, when that
// fails too, is not attempted: it fails at once with the cause (gRPC would
// wait for its reconnection backoff, up to two minutes, and retry until
// the deadline). Once a handshake succeeds, exports run again.
func TestTLSGuardNextExport(t *testing.T) {
	t.Parallel()
	server := collectortest.NewCert(t, "collector")
	stranger := collectortest.NewCert(t, "stranger")
	c := collectortest.NewTLS(t, ProtocolGRPC, collectortest.OK, server.ServerConfig(nil))
	addr := strings.TrimPrefix(c.Endpoint, "https://")
	handshake := func(g *RefusalGuard, caFile string) error {
		s, err := ReadSettings(environ.Map{"OTEL_EXPORTER_OTLP_CERTIFICATE": caFile}, Config{}, Needs{Traces: true})
		if err != nil {
			t.Fatal(err)
		}
		creds := g.Credentials(s.Traces)
		conn, err := g.dial(context.Background(), addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_, _, err = creds.ClientHandshake(context.Background(), "127.0.0.1", conn)
		return err
	}
	g := NewRefusalGuard(nil)
	if err := handshake(g, stranger.CertFile); err == nil {
		t.Fatal("the handshake with an untrusted certificate succeeded")
	}
	ran := false
	err := g.Export(context.Background(), func(context.Context) error { ran = true; return nil })
	if ran || !errors.Is(err, ErrTLSHandshake) || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("next export: ran %v, err %v; want not run, ErrTLSHandshake with the certificate problem", ran, err)
	}
	if err := handshake(g, server.CertFile); err != nil {
		t.Fatalf("the handshake with the trusted certificate: %v", err)
	}
	if err := g.Export(context.Background(), func(context.Context) error { ran = true; return nil }); !ran || err != nil {
		t.Errorf("export after a good handshake: ran %v, err %v", ran, err)
	}
}

// TestExportErrorShaped: a collector (here a proxy in front of it) that
// answers with a 200 KB HTML error page echoing the request's
// authorization header: the export error is cut to MaxErrorText bytes of
// text, on one line, without the header value.
func TestExportErrorShaped(t *testing.T) {
	t.Parallel()
	const token = "Bearer s3cr3t-t0ken-value"
	page := "<html>\r\n<body>\x1b[31mBad Gateway</body>\nAuthorization: " + token + "\n" + strings.Repeat("<p>padding</p>\n", 200_000/15) + "</html>"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest) // not retried
		_, _ = w.Write([]byte(page))
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	err = exportOne(t, environ.Map{
		"OTEL_EXPORTER_OTLP_PROTOCOL":        "http/protobuf",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://" + l.Addr().String(),
		"OTEL_EXPORTER_OTLP_HEADERS":         "authorization=" + strings.ReplaceAll(token, " ", "%20"),
	})
	if err == nil {
		t.Fatal("Shutdown succeeded against a failing collector")
	}
	msg := err.Error()
	if strings.Contains(msg, "s3cr3t") {
		t.Errorf("the message shows the header value: %q", msg)
	}
	if strings.ContainsAny(msg, "\r\n\x1b") {
		t.Errorf("the message holds control characters: %q", msg)
	}
	// The text kept, the marker and the count of what was cut.
	if !strings.Contains(msg, " bytes cut)") || len(msg) > MaxErrorText+len("… (1000000 bytes cut)") {
		t.Errorf("message of %d bytes, want at most %d of text and a cut marker: %q", len(msg), MaxErrorText, msg)
	}
	if !strings.Contains(msg, "400") {
		t.Errorf("the message lost the status: %q", msg)
	}
}

// TestShapeError: the shaping rules on exact texts, written out by hand.
func TestShapeError(t *testing.T) {
	t.Parallel()
	secret := "tok-123456789"
	long := "a\nb" + strings.Repeat("x", 300)
	// "a\nb" escapes to the 4 bytes `a\nb`: 4+300 = 304 bytes, 256 kept.
	wantLong := `a\nb` + strings.Repeat("x", 252) + "… (48 bytes cut)"
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"plain", errors.New("traces export: 503 Service Unavailable"), "traces export: 503 Service Unavailable"},
		{"control", errors.New("body: <h1>\r\n\t\x1b[0m\xff\u2028</h1>"), `body: <h1>\r\n\t\x1b[0m\xff\u2028</h1>`},
		{"secret", errors.New("echo: Authorization: Bearer " + secret + "; again " + secret), "echo: Authorization: Bearer [redacted]; again [redacted]"},
		{"userinfo", errors.New(`Post "https://u:pw@host/v1/traces": EOF`), `Post "https://[redacted]@host/v1/traces": EOF`},
		{"long", errors.New(long), wantLong},
		{"join", errors.Join(errors.New("x\ny"), context.DeadlineExceeded), "x\\ny\ncontext deadline exceeded"},
		{"multi-byte cut", errors.New(strings.Repeat("x", 255) + "é" + "yz"), strings.Repeat("x", 255) + "… (4 bytes cut)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ShapeError(tc.err, []string{secret})
			if got.Error() != tc.want {
				t.Errorf("ShapeError = %q, want %q", got.Error(), tc.want)
			}
			if !errors.Is(got, tc.err) {
				t.Error("the shaped error does not wrap the original")
			}
			if again := ShapeError(got, nil); again.Error() != tc.want {
				t.Errorf("shaped twice: %q", again.Error())
			}
		})
	}
	if ShapeError(nil, nil) != nil {
		t.Error("ShapeError(nil) is not nil")
	}
	// A join of shaped errors keeps its own layout.
	joined := errors.Join(ShapeError(errors.New("a"), nil), ShapeError(errors.New("b"), nil))
	if got := ShapeError(joined, nil); got != joined {
		t.Errorf("a join of shaped errors was reshaped: %q", got)
	}
	// A shaped error wrapped once more keeps its text whole.
	inner := ShapeError(errors.New(long), nil)
	if got := ShapeError(fmt.Errorf("failed to upload: %w", inner), nil).Error(); got != "failed to upload: "+wantLong {
		t.Errorf("wrapped shaped error = %q", got)
	}
}

// TestDiagnosticsShape: what reaches the Lens logger through the error
// handler is shaped too, with the header values Setup found.
func TestDiagnosticsShape(t *testing.T) {
	t.Parallel()
	var buf strings.Builder
	d := NewDiagnostics(slog.New(slog.NewTextHandler(&buf, nil)))
	d.AddSecrets("s3cr3t-value")
	d.Handle(errors.New("OTLP partial success: echo s3cr3t-value\n" + strings.Repeat("y", 5000)))
	out := buf.String()
	if strings.Contains(out, "s3cr3t") || strings.Count(out, "\n") != 1 || !strings.Contains(out, "bytes cut)") || len(out) > 3*MaxErrorText+200 {
		t.Errorf("log record of %d bytes not shaped: %q", len(out), out)
	}
}

// TestHeaderSecrets: the header values, as written and decoded, and their
// long words; not the names, not short values.
func TestHeaderSecrets(t *testing.T) {
	t.Parallel()
	got := headerSecrets(environ.Map{
		"OTEL_EXPORTER_OTLP_HEADERS":      "authorization=Bearer%20tok-123456789,x-short=ab",
		"OTEL_EXPORTER_OTLP_LOGS_HEADERS": "x-api-key= key-42 ,malformed",
	})
	want := []string{"Bearer%20tok-123456789", "Bearer tok-123456789", "tok-123456789", "key-42"}
	if !slices.Equal(got, want) {
		t.Errorf("headerSecrets = %q, want %q", got, want)
	}
}
