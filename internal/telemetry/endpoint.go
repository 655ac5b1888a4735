package telemetry

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/bounded"
)

// Default OTLP endpoints (the OpenTelemetry specification's).
const (
	DefaultGRPCEndpoint = "localhost:4317"
)

// Errors of the OTLP connection settings (the endpoint and TLS variables),
// each the reason of a *ConfigError naming its variable.
var (
	// ErrInvalidEndpoint: the endpoint cannot be used with the signal's
	// protocol (docs/resource.md#otlp-endpoint-and-tls).
	ErrInvalidEndpoint = errors.New("invalid OTLP endpoint")
	// ErrTLSFile: a CA, client certificate or client key file cannot be
	// read or holds no usable PEM data.
	ErrTLSFile = errors.New("unusable TLS file")
	// ErrEndpointCredentials: an endpoint URL with credentials (user:pw@)
	// or a query, which the OTLP exporters do not send
	// (docs/resource.md#endpoint-credentials). It wraps ErrInvalidEndpoint.
	ErrEndpointCredentials = fmt.Errorf("%w: credentials in the URL", ErrInvalidEndpoint)
)

// credentialsError refuses u when it carries credentials or a query: the
// OTLP exporters send neither, and the collector would answer 401.
func credentialsError(u *url.URL) error {
	what := ""
	switch {
	case u.User != nil:
		what = "user:password@"
	case u.RawQuery != "" || u.ForceQuery:
		what = "a ?query"
	default:
		return nil
	}
	return fmt.Errorf("%w (%s) are not sent by the OTLP exporters: put them in OTEL_EXPORTER_OTLP_HEADERS (authorization=Basic%%20BASE64 or the key's header)", ErrEndpointCredentials, what)
}

// hideQuery returns v with its query, if any, replaced: a ConfigError shows
// the value (its user:password masked).
func hideQuery(v string) string {
	if before, _, ok := strings.Cut(v, "?"); ok {
		return before + "?[redacted]"
	}
	return v
}

// The protocol's URL paths of the signals, appended to
// OTEL_EXPORTER_OTLP_ENDPOINT for OTLP/HTTP.
var signalPaths = map[string]string{SignalTraces: "v1/traces", SignalMetrics: "v1/metrics", SignalLogs: "v1/logs"}

// gRPC target schemes passed to gRPC as they are (its name resolvers).
var grpcSchemes = map[string]bool{"dns": true, "unix": true, "unix-abstract": true, "passthrough": true}

// connection reads the endpoint and TLS settings of an OTLP signal into s
// (docs/resource.md#otlp-endpoint-and-tls): the signal-specific variable
// when set, else the generic one. Each unusable value is one *ConfigError
// naming its variable; nothing falls back to a default silently.
func (r *settingsReader) connection(signal string, s *Signal) {
	name, raw := r.lookup("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
	generic := name == "OTEL_EXPORTER_OTLP_ENDPOINT"
	insecure := r.insecure(signal)
	s.EndpointVar, s.EndpointValue = name, raw
	if s.Protocol == ProtocolHTTPProtobuf {
		if name != "" {
			u, err := httpEndpoint(raw, signal, generic)
			if err != nil {
				r.fail(name, hideQuery(raw), err)
			}
			s.Endpoint, s.Insecure = u, strings.HasPrefix(u, "http://")
		}
	} else {
		s.Endpoint, s.Insecure = DefaultGRPCEndpoint, insecure
		if name != "" {
			target, ins, err := grpcEndpoint(raw, insecure)
			if err != nil {
				r.fail(name, hideQuery(raw), err)
			}
			s.Endpoint, s.Insecure = target, ins
		}
	}
	s.TLS = r.tlsConfig(signal)
}

// EndpointURL returns the OTLP/gRPC target of s as an http:// (Insecure)
// or https:// URL when it is HOST:PORT, for exporters that otherwise parse
// their own endpoint variable to decide on security (otlploggrpc); false
// for a target with one of gRPC's schemes.
func (s Signal) EndpointURL() (string, bool) {
	if scheme, _, ok := strings.Cut(s.Endpoint, ":"); ok && grpcSchemes[strings.ToLower(scheme)] {
		return "", false
	}
	if s.Insecure {
		return "http://" + s.Endpoint, true
	}
	return "https://" + s.Endpoint, true
}

// lookup returns the first of names that is set and not blank, and its
// value.
func (r *settingsReader) lookup(names ...string) (name, raw string) {
	for _, n := range names {
		if v, _ := r.env.LookupEnv(n); strings.TrimSpace(v) != "" {
			return n, v
		}
	}
	return "", ""
}

// insecure reads OTEL_EXPORTER_OTLP[_<SIGNAL>]_INSECURE: "true" or "false"
// in any case; anything else is false, with a warning.
func (r *settingsReader) insecure(signal string) bool {
	name, raw := r.lookup("OTEL_EXPORTER_OTLP_"+signal+"_INSECURE", "OTEL_EXPORTER_OTLP_INSECURE")
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "true":
		return true
	case "", "false":
		return false
	}
	r.warnf("%s=%q is neither true nor false; treated as false", name, raw)
	return false
}

// grpcEndpoint returns the gRPC target of an OTLP/gRPC endpoint and
// whether the connection is without TLS: a URL with scheme http (no TLS)
// or https (TLS), whose host:port is the target; a gRPC target with one of
// gRPC's schemes (dns:, unix:, unix-abstract:, passthrough:), as it is
// (unix sockets without TLS); or host:port without a scheme, whose
// security is insecure (OTEL_EXPORTER_OTLP[_<SIGNAL>]_INSECURE).
func grpcEndpoint(raw string, insecure bool) (target string, noTLS bool, err error) {
	v := strings.TrimSpace(raw)
	if err := schemeTypo(v); err != nil {
		return DefaultGRPCEndpoint, insecure, err
	}
	scheme, rest, hasScheme := strings.Cut(v, ":")
	scheme = strings.ToLower(scheme)
	switch {
	case hasScheme && (scheme == "http" || scheme == "https"):
		u, perr := url.Parse(v)
		if perr != nil || u.Hostname() == "" || u.Opaque != "" {
			return DefaultGRPCEndpoint, insecure, fmt.Errorf("%w: not a URL with a host (want http://HOST:PORT, https://HOST:PORT or HOST:PORT)", ErrInvalidEndpoint)
		}
		if p := u.Port(); p != "" && !validPort(p) {
			return DefaultGRPCEndpoint, insecure, fmt.Errorf("%w: port %s is not 1 to 65535", ErrInvalidEndpoint, p)
		}
		if err := credentialsError(u); err != nil {
			return DefaultGRPCEndpoint, insecure, err
		}
		// The host as it is (gRPC's default port is 443), as the Go SDK.
		return u.Host, scheme == "http", nil
	case hasScheme && grpcSchemes[scheme]:
		if strings.TrimLeft(rest, "/") == "" {
			return DefaultGRPCEndpoint, insecure, fmt.Errorf("%w: the %s: target names nothing", ErrInvalidEndpoint, scheme)
		}
		return v, insecure || scheme == "unix" || scheme == "unix-abstract", nil
	case strings.Contains(v, "://"):
		return DefaultGRPCEndpoint, insecure, fmt.Errorf("%w: scheme %q (want http, https, one of gRPC's dns, unix, unix-abstract, passthrough, or HOST:PORT without a scheme)", ErrInvalidEndpoint, scheme)
	}
	host, port, serr := net.SplitHostPort(v)
	if serr == nil && strings.Contains(host, "/") {
		return DefaultGRPCEndpoint, insecure, fmt.Errorf("%w: the host %q holds a \"/\" (want HOST:PORT, http://HOST:PORT or https://HOST:PORT)", ErrInvalidEndpoint, host)
	}
	if serr != nil || host == "" || !validPort(port) {
		return DefaultGRPCEndpoint, insecure, fmt.Errorf("%w: want HOST:PORT, http://HOST:PORT or https://HOST:PORT", ErrInvalidEndpoint)
	}
	return v, insecure, nil
}

func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n > 0 && n < 1<<16
}

// httpEndpoint returns the URL an OTLP/HTTP exporter posts the signal to:
// the specification's rules — the generic variable is a base URL to which
// v1/<signal> is appended, a signal-specific one is used as it is (its
// empty path is "/"). Both must be URLs with scheme http or https and a
// host: OTLP/HTTP endpoints are URLs (a HOST:PORT without scheme is an
// OTLP/gRPC endpoint).
func httpEndpoint(raw, signal string, generic bool) (string, error) {
	v := strings.TrimSpace(raw)
	if err := schemeTypo(v); err != nil {
		return "", err
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		reason := "not a URL"
		if err == nil && u.Scheme != "" && u.Scheme != "http" && u.Scheme != "https" && u.Hostname() != "" {
			reason = fmt.Sprintf("scheme %q", u.Scheme)
		}
		return "", fmt.Errorf("%w: %s; OTLP/HTTP endpoints are URLs: want http://HOST:PORT or https://HOST:PORT (HOST:PORT without a scheme is for OTLP/gRPC)", ErrInvalidEndpoint, reason)
	}
	if p := u.Port(); p != "" && !validPort(p) {
		return "", fmt.Errorf("%w: port %s is not 1 to 65535", ErrInvalidEndpoint, p)
	}
	if err := credentialsError(u); err != nil {
		return "", err
	}
	p := u.Path
	if generic {
		p = path.Join("/", p, signalPaths[signal])
	} else if p == "" {
		p = "/"
	}
	out := url.URL{Scheme: u.Scheme, Host: u.Host, Path: p}
	return out.String(), nil
}

// tlsConfig reads the CA and client certificate files of the signal (the
// signal-specific variable of each when set, else the generic one): nil
// when none is set. A file that cannot be read or holds no usable PEM data
// is a *ConfigError naming its variable; so is a client certificate
// without its key or a key without its certificate.
func (r *settingsReader) tlsConfig(signal string) *tls.Config {
	caVar, caPath := r.lookup("OTEL_EXPORTER_OTLP_"+signal+"_CERTIFICATE", "OTEL_EXPORTER_OTLP_CERTIFICATE")
	certVar, certPath := r.lookup("OTEL_EXPORTER_OTLP_"+signal+"_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE")
	keyVar, keyPath := r.lookup("OTEL_EXPORTER_OTLP_"+signal+"_CLIENT_KEY", "OTEL_EXPORTER_OTLP_CLIENT_KEY")
	if caVar == "" && certVar == "" && keyVar == "" {
		return nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	ok := true
	if caVar != "" {
		pool, err := readCAFile(strings.TrimSpace(caPath))
		if err != nil {
			r.fail(caVar, caPath, err)
			ok = false
		}
		cfg.RootCAs = pool
	}
	switch {
	case certVar != "" && keyVar == "":
		r.fail(certVar, certPath, fmt.Errorf("%w: a client certificate needs its key (OTEL_EXPORTER_OTLP_CLIENT_KEY or OTEL_EXPORTER_OTLP_%s_CLIENT_KEY is not set)", ErrTLSFile, signal))
		ok = false
	case keyVar != "" && certVar == "":
		r.fail(keyVar, keyPath, fmt.Errorf("%w: a client key needs its certificate (OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE or OTEL_EXPORTER_OTLP_%s_CLIENT_CERTIFICATE is not set)", ErrTLSFile, signal))
		ok = false
	case certVar != "":
		certPEM, cerr := readPEMFile(strings.TrimSpace(certPath), "CERTIFICATE")
		if cerr != nil {
			r.fail(certVar, certPath, cerr)
		}
		keyPEM, kerr := readPEMFile(strings.TrimSpace(keyPath), "PRIVATE KEY")
		if kerr != nil {
			r.fail(keyVar, keyPath, kerr)
		}
		if cerr != nil || kerr != nil {
			ok = false
			break
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			// The error names no key material.
			r.fail(keyVar, keyPath, fmt.Errorf("%w: the key does not go with %s: %v", ErrTLSFile, certVar, err))
			ok = false
			break
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if !ok {
		return nil
	}
	return cfg
}

// readCAFile reads a PEM file of CA certificates.
func readCAFile(name string) (*x509.CertPool, error) {
	data, err := readPEMFile(name, "CERTIFICATE")
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("%w: no valid PEM certificate in %s", ErrTLSFile, name)
	}
	return pool, nil
}

// maxPEMFile bounds a TLS file: a CA bundle of every public root is a few
// hundred kilobytes.
const maxPEMFile = 16 << 20

// readPEMFile reads a file that must hold a PEM block whose type ends with
// kind ("CERTIFICATE", "PRIVATE KEY").
func readPEMFile(name, kind string) ([]byte, error) {
	data, err := bounded.ReadFile(name, maxPEMFile)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTLSFile, err)
	}
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return nil, fmt.Errorf("%w: no PEM %s block in %s", ErrTLSFile, strings.ToLower(kind), name)
		}
		if strings.HasSuffix(b.Type, kind) {
			return data, nil
		}
	}
}

// headerSecrets returns the values of the OTLP header variables
// (OTEL_EXPORTER_OTLP_HEADERS and the signal-specific ones) in env and in
// the process environment (where the exporters read them), decoded as the
// exporters decode them and as written, with each of their words of 8 bytes
// or more: the text that export error messages must not show. Values
// shorter than 4 bytes are left out (masking them would garble messages
// and hides nothing).
func headerSecrets(envs ...environ.Lookuper) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string, minLen int) {
		if s = strings.TrimSpace(s); len(s) >= minLen && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, env := range envs {
		for _, name := range [...]string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_METRICS_HEADERS", "OTEL_EXPORTER_OTLP_LOGS_HEADERS"} {
			raw, _ := env.LookupEnv(name)
			for pair := range strings.SplitSeq(raw, ",") {
				_, v, ok := strings.Cut(pair, "=")
				if !ok {
					continue
				}
				values := []string{v}
				if d, err := url.PathUnescape(v); err == nil {
					values = append(values, d)
				}
				for _, v := range values {
					add(v, 4)
					for w := range strings.FieldsSeq(v) {
						add(w, 8)
					}
				}
			}
		}
	}
	return out
}
