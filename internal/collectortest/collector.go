// Package collectortest provides real OTLP receivers for the fault tests of
// lens-go: an OTLP/HTTP server and an OTLP/gRPC server (real listeners on
// 127.0.0.1, plain text or TLS with a certificate made for the test) that
// count requests per signal, keep what they receive, and answer (with an
// OTLP partial success when asked), fail or hang as asked; a TCP listener that accepts connections and
// never answers; and an address that refuses connections. It is imported by
// tests only.
package collectortest

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Mode is how a collector answers exports.
type Mode int

const (
	// OK accepts every export.
	OK Mode = iota
	// Fail answers every export with an error that the exporters do not
	// retry: HTTP 500, gRPC Internal.
	Fail
	// Hang never answers (until the collector is closed at the end of the
	// test).
	Hang
)

func (m Mode) String() string {
	switch m {
	case OK:
		return "ok"
	case Fail:
		return "fail"
	case Hang:
		return "hang"
	}
	return "mode?"
}

// Signals, as the collectors count them.
const (
	Traces  = "traces"
	Metrics = "metrics"
	Logs    = "logs"
)

// Collector is an OTLP receiver. Its methods are safe for concurrent use.
type Collector struct {
	// Endpoint is the value for OTEL_EXPORTER_OTLP_ENDPOINT
	// ("http://127.0.0.1:PORT"; plain text for both protocols).
	Endpoint string

	mode Mode
	stop chan struct{} // closed at cleanup: hanging handlers return

	mu       sync.Mutex
	gate     func(n int) bool // see Gate
	reject   int64            // items each export answers as rejected (Reject)
	rejMsg   string           // the partial success's error_message
	held     int64            // spans kept: received and not rejected
	requests map[string]int
	payloads [][]byte
	headers  []map[string][]string
	spans    []*tracepb.Span
	traces   []*coltracepb.ExportTraceServiceRequest
	metrics  []*colmetricspb.ExportMetricsServiceRequest
	logs     []*collogspb.ExportLogsServiceRequest
}

func newCollector(mode Mode) *Collector {
	return &Collector{mode: mode, stop: make(chan struct{}), requests: map[string]int{}}
}

// Reject makes the collector answer every later export with an OTLP
// partial success: n of its items rejected (at most all of them; for
// metrics and logs, n whatever their number), with msg as error_message.
// n = 0 with a message is a success with a warning. The collector keeps the
// spans it does not reject (Held).
func (c *Collector) Reject(n int64, msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reject, c.rejMsg = n, msg
}

// Held returns the number of spans the collector kept: received in exports
// it answered with success, less those it rejected.
func (c *Collector) Held() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held
}

// partial returns the partial success of an export of items spans (or
// metric data points, log records) and counts the spans kept.
func (c *Collector) partial(signal string, items int64) (rejected int64, msg string, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rejected = c.reject
	if signal == Traces {
		rejected = min(rejected, items)
		c.held += items - rejected
	}
	return rejected, c.rejMsg, c.reject != 0 || c.rejMsg != ""
}

// answerOf returns the OTLP response of an export of signal (its request
// serialised), with the partial success Reject asked for.
func (c *Collector) answerOf(signal string, payload []byte) proto.Message {
	switch signal {
	case Traces:
		var req coltracepb.ExportTraceServiceRequest
		_ = proto.Unmarshal(payload, &req)
		var n int64
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				n += int64(len(ss.Spans))
			}
		}
		resp := &coltracepb.ExportTraceServiceResponse{}
		if r, msg, ok := c.partial(signal, n); ok {
			resp.PartialSuccess = &coltracepb.ExportTracePartialSuccess{RejectedSpans: r, ErrorMessage: msg}
		}
		return resp
	case Metrics:
		resp := &colmetricspb.ExportMetricsServiceResponse{}
		if r, msg, ok := c.partial(signal, 0); ok {
			resp.PartialSuccess = &colmetricspb.ExportMetricsPartialSuccess{RejectedDataPoints: r, ErrorMessage: msg}
		}
		return resp
	}
	resp := &collogspb.ExportLogsServiceResponse{}
	if r, msg, ok := c.partial(signal, 0); ok {
		resp.PartialSuccess = &collogspb.ExportLogsPartialSuccess{RejectedLogRecords: r, ErrorMessage: msg}
	}
	return resp
}

// Requests returns the number of export requests received for signal
// (Traces, Metrics, Logs), whatever the answer was.
func (c *Collector) Requests(signal string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.requests[signal]
}

// Payloads returns every export request received, serialised (the HTTP
// body, uncompressed; the gRPC request, marshalled again).
func (c *Collector) Payloads() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]byte(nil), c.payloads...)
}

// Headers returns the request headers (HTTP) or metadata (gRPC) of every
// request, keys in lower case.
func (c *Collector) Headers() []map[string][]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]map[string][]string(nil), c.headers...)
}

// Spans returns the spans of the trace exports received.
func (c *Collector) Spans() []*tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*tracepb.Span(nil), c.spans...)
}

// Contains reports whether any payload or any header value holds s.
func (c *Collector) Contains(s string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.payloads {
		if bytes.Contains(p, []byte(s)) {
			return true
		}
	}
	for _, h := range c.headers {
		for k, vs := range h {
			if strings.Contains(k, s) {
				return true
			}
			for _, v := range vs {
				if strings.Contains(v, s) {
					return true
				}
			}
		}
	}
	return false
}

// Gate makes the collector, in mode OK, call f before it answers a trace
// export, with n counting the trace exports from 1: the collector answers
// when f returns, accepting the export when f returns true, and hangs on
// it (as in mode Hang) when f returns false. f may block (a slow
// collector); the export is recorded (Spans, Payloads) before f is called.
func (c *Collector) Gate(f func(n int) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gate = f
}

// accepts applies the gate to the trace export numbered n: false when the
// collector must hang on it.
func (c *Collector) accepts(signal string, n int) bool {
	c.mu.Lock()
	gate := c.gate
	c.mu.Unlock()
	return signal != Traces || gate == nil || gate(n)
}

// record records an export and returns how many of its signal there were.
func (c *Collector) record(signal string, payload []byte, header map[string][]string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests[signal]++
	c.payloads = append(c.payloads, payload)
	c.headers = append(c.headers, header)
	switch signal {
	case Traces:
		var req coltracepb.ExportTraceServiceRequest
		if proto.Unmarshal(payload, &req) == nil {
			c.traces = append(c.traces, &req)
			for _, rs := range req.ResourceSpans {
				for _, ss := range rs.ScopeSpans {
					c.spans = append(c.spans, ss.Spans...)
				}
			}
		}
	case Metrics:
		var req colmetricspb.ExportMetricsServiceRequest
		if proto.Unmarshal(payload, &req) == nil {
			c.metrics = append(c.metrics, &req)
		}
	case Logs:
		var req collogspb.ExportLogsServiceRequest
		if proto.Unmarshal(payload, &req) == nil {
			c.logs = append(c.logs, &req)
		}
	}
	return c.requests[signal]
}

// TraceRequests returns the trace export requests received, decoded.
func (c *Collector) TraceRequests() []*coltracepb.ExportTraceServiceRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*coltracepb.ExportTraceServiceRequest(nil), c.traces...)
}

// MetricRequests returns the metric export requests received, decoded.
func (c *Collector) MetricRequests() []*colmetricspb.ExportMetricsServiceRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*colmetricspb.ExportMetricsServiceRequest(nil), c.metrics...)
}

// LogRequests returns the log export requests received, decoded.
func (c *Collector) LogRequests() []*collogspb.ExportLogsServiceRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*collogspb.ExportLogsServiceRequest(nil), c.logs...)
}

// Attrs returns OTLP attributes as Go values (see SpanAttr), by key.
func Attrs(kvs []*commonpb.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = anyValue(kv.Value)
	}
	return m
}

// NewHTTP starts an OTLP/HTTP (protobuf) collector answering as mode,
// closed when the test ends.
func NewHTTP(t testing.TB, mode Mode) *Collector {
	t.Helper()
	return newHTTP(t, mode, nil)
}

func newHTTP(t testing.TB, mode Mode, cfg *tls.Config) *Collector {
	t.Helper()
	c := newCollector(mode)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(c.serveHTTP)}
	c.Endpoint = "http://" + l.Addr().String()
	if cfg != nil {
		l = tls.NewListener(l, cfg)
		c.Endpoint = "https://" + l.Addr().String()
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() {
		close(c.stop)
		_ = srv.Close()
	})
	return c
}

func (c *Collector) serveHTTP(w http.ResponseWriter, r *http.Request) {
	var signal string
	switch r.URL.Path {
	case "/v1/traces":
		signal = Traces
	case "/v1/metrics":
		signal = Metrics
	case "/v1/logs":
		signal = Logs
	default:
		http.NotFound(w, r)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	payload, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	header := map[string][]string{}
	for k, v := range r.Header {
		header[strings.ToLower(k)] = v
	}
	n := c.record(signal, payload, header)
	mode := c.mode
	if mode == OK && !c.accepts(signal, n) {
		mode = Hang
	}
	switch mode {
	case Fail:
		http.Error(w, "collectortest: failing on purpose", http.StatusInternalServerError)
		return
	case Hang:
		select {
		case <-r.Context().Done():
		case <-c.stop:
		}
		return
	}
	out, _ := proto.Marshal(c.answerOf(signal, payload))
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// NewGRPC starts an OTLP/gRPC collector (plain text) answering as mode,
// closed when the test ends.
func NewGRPC(t testing.TB, mode Mode) *Collector {
	t.Helper()
	return newGRPC(t, mode, nil)
}

func newGRPC(t testing.TB, mode Mode, cfg *tls.Config) *Collector {
	t.Helper()
	c := newCollector(mode)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var opts []grpc.ServerOption
	c.Endpoint = "http://" + l.Addr().String()
	if cfg != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(cfg)))
		c.Endpoint = "https://" + l.Addr().String()
	}
	srv := grpc.NewServer(opts...)
	coltracepb.RegisterTraceServiceServer(srv, traceService{c: c})
	colmetricspb.RegisterMetricsServiceServer(srv, metricsService{c: c})
	collogspb.RegisterLogsServiceServer(srv, logsService{c: c})
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() {
		close(c.stop)
		srv.Stop()
	})
	return c
}

// answer records a gRPC export and answers it as the mode says: an error,
// or nil and the response to send.
func (c *Collector) answer(ctx context.Context, signal string, req proto.Message) (proto.Message, error) {
	payload, _ := proto.Marshal(req)
	header := map[string][]string{}
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		for k, v := range md {
			header[strings.ToLower(k)] = v
		}
	}
	n := c.record(signal, payload, header)
	mode := c.mode
	if mode == OK && !c.accepts(signal, n) {
		mode = Hang
	}
	switch mode {
	case Fail:
		return nil, status.Error(codes.Internal, "collectortest: failing on purpose")
	case Hang:
		select {
		case <-ctx.Done():
		case <-c.stop:
		}
		return nil, status.Error(codes.Unavailable, "collectortest: closed")
	}
	return c.answerOf(signal, payload), nil
}

type traceService struct {
	coltracepb.UnimplementedTraceServiceServer
	c *Collector
}

func (s traceService) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	resp, err := s.c.answer(ctx, Traces, req)
	if err != nil {
		return nil, err
	}
	return resp.(*coltracepb.ExportTraceServiceResponse), nil
}

type metricsService struct {
	colmetricspb.UnimplementedMetricsServiceServer
	c *Collector
}

func (s metricsService) Export(ctx context.Context, req *colmetricspb.ExportMetricsServiceRequest) (*colmetricspb.ExportMetricsServiceResponse, error) {
	resp, err := s.c.answer(ctx, Metrics, req)
	if err != nil {
		return nil, err
	}
	return resp.(*colmetricspb.ExportMetricsServiceResponse), nil
}

type logsService struct {
	collogspb.UnimplementedLogsServiceServer
	c *Collector
}

func (s logsService) Export(ctx context.Context, req *collogspb.ExportLogsServiceRequest) (*collogspb.ExportLogsServiceResponse, error) {
	resp, err := s.c.answer(ctx, Logs, req)
	if err != nil {
		return nil, err
	}
	return resp.(*collogspb.ExportLogsServiceResponse), nil
}

// New starts a collector for protocol ("grpc" or "http/protobuf").
func New(t testing.TB, protocol string, mode Mode) *Collector {
	t.Helper()
	if protocol == "grpc" {
		return NewGRPC(t, mode)
	}
	return NewHTTP(t, mode)
}

// NewTLS starts a collector for protocol ("grpc" or "http/protobuf") that
// speaks TLS with cfg (see Certificate), closed when the test ends; its
// Endpoint is "https://127.0.0.1:PORT".
func NewTLS(t testing.TB, protocol string, mode Mode, cfg *tls.Config) *Collector {
	t.Helper()
	if protocol == "grpc" {
		return newGRPC(t, mode, cfg)
	}
	return newHTTP(t, mode, cfg)
}

// Cert is a self-signed certificate for 127.0.0.1 and localhost, made for
// one test.
type Cert struct {
	// CertFile and KeyFile are its PEM files (in the test's temporary
	// directory).
	CertFile, KeyFile string
	// TLS is the certificate with its key, for a server.
	TLS tls.Certificate
}

// ServerConfig returns a server TLS configuration presenting c; a non-nil
// clientCA makes the server require client certificates signed by it.
func (c Cert) ServerConfig(clientCA *Cert) *tls.Config {
	cfg := &tls.Config{Certificates: []tls.Certificate{c.TLS}, MinVersion: tls.VersionTLS12}
	if clientCA != nil {
		pool := x509.NewCertPool()
		pool.AddCert(clientCA.TLS.Leaf)
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return cfg
}

// NewCert makes a self-signed ECDSA certificate named name (its common
// name) valid for 127.0.0.1 and localhost, and writes its PEM files.
func NewCert(t testing.TB, name string) Cert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	dir := t.TempDir()
	c := Cert{CertFile: filepath.Join(dir, name+".crt"), KeyFile: filepath.Join(dir, name+".key")}
	if err := os.WriteFile(c.CertFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.KeyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if c.TLS, err = tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	return c
}

// Silent starts a TCP listener that accepts every connection and never
// reads or writes a byte, closed when the test ends, and returns its
// endpoint ("http://127.0.0.1:PORT").
func Silent(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return "http://" + l.Addr().String()
}

// Refused returns an endpoint ("http://127.0.0.1:PORT") on which nothing
// listens: connecting to it is refused.
func Refused(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr
}

// SpanAttr returns the value of the span attribute key as a Go value
// (string, int64, bool, float64, []any) and whether it is there.
func SpanAttr(s *tracepb.Span, key string) (any, bool) {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return anyValue(kv.Value), true
		}
	}
	return nil, false
}

func anyValue(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_ArrayValue:
		var out []any
		for _, e := range x.ArrayValue.GetValues() {
			out = append(out, anyValue(e))
		}
		return out
	}
	return nil
}
