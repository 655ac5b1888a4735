package telemetry

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/nemolens/lens-go/environ"
)

// The rules of issue 30's Telemetry list, one test each
// (docs/reliability.md): error shaping, redaction, UTF-8 and configuration.

// shapeRows are ShapeError's boundary rows: the text limit at, one below
// and one above MaxErrorText, invalid UTF-8 without a control character,
// joins of shaped and unshaped errors in both orders, and header secrets
// that contain one another.
var shapeRows = []struct {
	name    string
	err     error
	secrets []string
	want    string
}{
	{"255 bytes", errors.New(strings.Repeat("a", MaxErrorText-1)), nil, strings.Repeat("a", MaxErrorText-1)},
	{"256 bytes", errors.New(strings.Repeat("a", MaxErrorText)), nil, strings.Repeat("a", MaxErrorText)},
	{"257 bytes", errors.New(strings.Repeat("a", MaxErrorText+1)), nil, strings.Repeat("a", MaxErrorText) + "… (1 bytes cut)"},
	{"invalid UTF-8 only", errors.New("bad \xff byte"), nil, `bad \xff byte`},
	{"join raw then shaped", errors.Join(errors.New("a\x00"), ShapeError(errors.New("b"), nil)), nil, "a\\x00\nb"},
	{"join shaped then raw", errors.Join(ShapeError(errors.New("b"), nil), errors.New("a\x00")), nil, "b\na\\x00"},
	{"longer secret first", errors.New("key abcd1234efgh"), []string{"abcd1234efgh", "abcd1234"}, "key [redacted]"},
	{"shorter secret first", errors.New("key abcd1234efgh"), []string{"abcd1234", "abcd1234efgh"}, "key [redacted]"},
}

// TestShapeRules: an error text of exactly MaxErrorText bytes is shown whole
// (break: `len(s) <= limit` → `<`); invalid UTF-8 is escaped though no
// control character is there (break: drop `r == utf8.RuneError ||` in
// escapeControl); a join is shaped unless every part is (break: `same =
// same && s == e` → `same = s == e`); the longer of two nested secrets is
// redacted whole (break: drop the sort in shapeText).
func TestShapeRules(t *testing.T) {
	t.Parallel()
	for _, tc := range shapeRows {
		if got := ShapeError(tc.err, tc.secrets).Error(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// FuzzShapeError: whatever the text and secrets, the message is one line of
// valid UTF-8, shows no secret of 4 bytes or more, and is at most
// MaxErrorText bytes plus the cut note.
func FuzzShapeError(f *testing.F) {
	for _, tc := range shapeRows {
		f.Add(tc.err.Error(), strings.Join(tc.secrets, ","))
	}
	f.Fuzz(func(t *testing.T, text, secrets string) {
		var list []string
		for s := range strings.SplitSeq(secrets, ",") {
			if len(s) >= 4 && !strings.ContainsAny(s, "[]\\") {
				list = append(list, s)
			}
		}
		got := ShapeError(errors.New(text), list).Error()
		if strings.ContainsAny(got, "\n\r\x00") || !utf8Valid(got) {
			t.Fatalf("%q: not one line of valid UTF-8", got)
		}
		if len(got) > MaxErrorText+len("… (99999999999 bytes cut)") {
			t.Fatalf("%d bytes", len(got))
		}
	})
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "?") == s }

// TestHeaderSecretBoundaries: a header value of 4 bytes is a secret, one of
// 3 is not (break: `len(s) >= minLen` → `>`); a word of 8 bytes inside a
// value is one, a word of 7 is not.
func TestHeaderSecretBoundaries(t *testing.T) {
	t.Parallel()
	got := headerSecrets(environ.Map{"OTEL_EXPORTER_OTLP_HEADERS": "a=abc,b=abcd,c=abcde,d=x 1234567,e=x 12345678,f=x 123456789"})
	want := []string{"abcd", "abcde", "x 1234567", "x 12345678", "12345678", "x 123456789", "123456789"}
	if !slices.Equal(got, want) {
		t.Errorf("headerSecrets = %q, want %q", got, want)
	}
	if msg := ShapeError(errors.New("401: key abcd refused"), got).Error(); strings.Contains(msg, "abcd") {
		t.Errorf("a 4-byte header value shows: %q", msg)
	}
}

// TestInvalidUTF8Key: an attribute whose key is invalid UTF-8 (its value
// valid) is exported with U+FFFD in the key and reported once (break:
// `if !kc && !vc` → `if !vc` in ValidKeyValues).
func TestInvalidUTF8Key(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	exp := tracetest.NewInMemoryExporter()
	tr, err := NewTracing(context.Background(), resource.Empty(), testSettings(4, 4),
		TracingOptions{Exporter: exp, Diagnostics: NewDiagnostics(slog.New(slog.NewTextHandler(&log, nil)))})
	if err != nil {
		t.Fatal(err)
	}
	_, span := tr.Provider().Tracer("t").Start(context.Background(), "op")
	span.SetAttributes(attribute.String("key\xff", "value"))
	span.End()
	if err := tr.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans() // before Shutdown, which empties the exporter
	_ = tr.Shutdown(context.Background())
	if len(spans) != 1 || len(spans[0].Attributes) != 1 || string(spans[0].Attributes[0].Key) != "key\uFFFD" {
		t.Fatalf("exported %+v, want one attribute key\\uFFFD", spans)
	}
	if n := strings.Count(log.String(), "span attribute"); n != 1 {
		t.Errorf("%d reports, want 1:\n%s", n, log.String())
	}
}

// TestConfigRules: a gRPC endpoint with a scheme other than http, https
// and gRPC's own is a configuration error naming its variable; so is a
// client key without its certificate (break: drop the `keyVar != "" &&
// certVar == ""` case of tlsConfig).
func TestConfigRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env      environ.Map
		varName  string
		sentinel error
	}{
		{environ.Map{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://host:4317"}, "OTEL_EXPORTER_OTLP_ENDPOINT", ErrInvalidEndpoint},
		{environ.Map{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT": "FTP://host:4317"}, "OTEL_EXPORTER_OTLP_ENDPOINT", ErrInvalidEndpoint},
		{environ.Map{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "ftp://host:4317"}, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", ErrInvalidEndpoint},
		{environ.Map{"OTEL_EXPORTER_OTLP_CLIENT_KEY": "/nonexistent/key.pem"}, "OTEL_EXPORTER_OTLP_CLIENT_KEY", ErrTLSFile},
		{environ.Map{"OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY": "/nonexistent/key.pem"}, "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY", ErrTLSFile},
	} {
		_, err := ReadSettings(tc.env, Config{}, Needs{Traces: true})
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Var != tc.varName || !errors.Is(err, tc.sentinel) {
			t.Errorf("%v: %v, want a *ConfigError for %s wrapping %v", tc.env, err, tc.varName, tc.sentinel)
		}
	}
}

// TestEndpointCredentials: credentials in an endpoint URL (user:pw@, a
// query key) are refused in one line that names the variable and points
// to OTEL_EXPORTER_OTLP_HEADERS, and shows neither (docs/resource.md
// #endpoint-credentials; on 85caa10 they were dropped silently and the
// collector answered 401). Break: drop the credentialsError call of
// httpEndpoint.
func TestEndpointCredentials(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ protocol, name, value string }{
		{"http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://user:PW-SECRET@host:4318"},
		{"http/protobuf", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://host:4318/v1/traces?api_key=KEY-SECRET"},
		{"http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://host:4318/?"},
		{"grpc", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://user:PW-SECRET@host:4317"},
		{"grpc", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://host:4317?token=KEY-SECRET"},
	} {
		env := environ.Map{"OTEL_EXPORTER_OTLP_PROTOCOL": tc.protocol, tc.name: tc.value}
		_, err := ReadSettings(env, Config{}, Needs{Traces: true})
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Var != tc.name || !errors.Is(err, ErrEndpointCredentials) || !errors.Is(err, ErrInvalidEndpoint) {
			t.Errorf("%s %s: %v, want a *ConfigError wrapping ErrEndpointCredentials", tc.protocol, tc.value, err)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "SECRET") || strings.Contains(msg, "\n") || !strings.Contains(msg, "OTEL_EXPORTER_OTLP_HEADERS") || !strings.Contains(msg, tc.name) {
			t.Errorf("message %q: want one line naming %s and OTEL_EXPORTER_OTLP_HEADERS, without the credentials", msg, tc.name)
		}
	}
	// Without credentials, the same URLs are fine.
	for _, v := range []string{"http://host:4318", "https://host:4318/v1/traces"} {
		if _, err := ReadSettings(environ.Map{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT": v}, Config{}, Needs{Traces: true}); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
}
