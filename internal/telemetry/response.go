package telemetry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"sync"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// What the collector answered (docs/tracing.md#export-counts): the OTLP
// exporters report a partial success (some items rejected) as an export
// error and take any 2xx OTLP/HTTP answer, an HTML page included, for a
// success. Lens sees every answer itself, per export and without global
// state: the export's context carries an [answer] that the OTLP/HTTP
// client's transport ([otlpTransport]) and the OTLP/gRPC client's
// interceptor ([answerInterceptor]) fill in.

// ErrNotOTLP is the cause of an export whose endpoint answered 2xx with
// something that is not an OTLP response (an HTML page, a body that does not
// parse): the data did not reach a collector.
var ErrNotOTLP = errors.New("not an OTLP response")

// maxResponse bounds the OTLP/HTTP response body Lens reads (an OTLP
// response holds at most a count and a message).
const maxResponse = 64 << 10

// RejectedError is a collector's partial success: it kept an export but
// rejected Rejected of its Sent items (0: it kept every one, with a warning
// in Message). The rejected items are not retried: the OTLP specification
// forbids it (the collector would reject them again).
type RejectedError struct {
	// Rejected is the collector's count; Sent the export's items (0 when
	// not known: metric and log exports).
	Rejected, Sent int64
	// What names the items: "spans", "metric data points", "log records".
	What string
	// Message is the collector's error_message ("" when it gave none).
	Message string
}

func (e *RejectedError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = "no message"
	}
	of := ""
	if e.Sent > 0 {
		of = fmt.Sprintf(" of %d", e.Sent)
	}
	if e.Rejected == 0 {
		return fmt.Sprintf("the collector kept all%s %s, with a warning: %s", of, e.What, msg)
	}
	return fmt.Sprintf("the collector rejected %d%s %s (partial success, not retried): %s", e.Rejected, of, e.What, msg)
}

// answer is what the collector answered to one export, as its transport or
// interceptor saw it.
type answer struct {
	mu        sync.Mutex
	delivered bool // a success answer arrived: the export reached the collector
	partial   *RejectedError
}

type answerKey struct{}

// withAnswer returns ctx carrying a new answer for one export.
func withAnswer(ctx context.Context) (context.Context, *answer) {
	a := &answer{}
	return context.WithValue(ctx, answerKey{}, a), a
}

// recordAnswer records reply, a success answer, in ctx's answer (if any);
// the last answer of an export's retries counts.
func recordAnswer(ctx context.Context, reply proto.Message) {
	a, _ := ctx.Value(answerKey{}).(*answer)
	if a == nil {
		return
	}
	p := partialSuccess(reply)
	a.mu.Lock()
	a.delivered, a.partial = true, p
	a.mu.Unlock()
}

// result returns whether a success answer arrived and its partial success
// (nil when it had none).
func (a *answer) result() (delivered bool, partial *RejectedError) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.delivered, a.partial
}

// answered runs fn, an export, with an answer in its context: when the
// collector's success answer arrived, the export is a success (nil) or its
// partial success (a *RejectedError), whatever fn returned (the exporters
// return a partial success as an error); otherwise fn's error.
func answered(ctx context.Context, fn func(context.Context) error) error {
	ctx, a := withAnswer(ctx)
	err := fn(ctx)
	if delivered, partial := a.result(); delivered {
		if partial != nil {
			return partial
		}
		return nil
	}
	return err
}

// partialSuccess returns the partial success of an OTLP export response of
// any signal, nil when it has none (no rejected item, no message). Every
// signal's response has the same shape — field 1, partial_success, a
// message of field 1, the rejected count (int64), and field 2,
// error_message — read here by reflection, so that the lens command does
// not link the log signal's protobuf types for it.
func partialSuccess(m proto.Message) *RejectedError {
	r := m.ProtoReflect()
	psField := r.Descriptor().Fields().ByNumber(1)
	if psField == nil || psField.Kind() != protoreflect.MessageKind || !r.Has(psField) {
		return nil
	}
	ps := r.Get(psField).Message()
	countField, msgField := ps.Descriptor().Fields().ByNumber(1), ps.Descriptor().Fields().ByNumber(2)
	if countField == nil || countField.Kind() != protoreflect.Int64Kind || msgField == nil || msgField.Kind() != protoreflect.StringKind {
		return nil
	}
	e := &RejectedError{Rejected: ps.Get(countField).Int(), Message: ps.Get(msgField).String(), What: itemsOf(string(countField.Name()))}
	if e.Rejected == 0 && e.Message == "" {
		return nil
	}
	return e
}

// itemsOf names the items of a rejected count field.
func itemsOf(field string) string {
	switch field {
	case "rejected_spans":
		return "spans"
	case "rejected_data_points":
		return "metric data points"
	case "rejected_log_records":
		return "log records"
	}
	return "items"
}

// answerInterceptor is the OTLP/gRPC client's unary interceptor: it records
// every success answer in the export's context.
func answerInterceptor(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	if m, ok := reply.(proto.Message); ok && err == nil {
		recordAnswer(ctx, m)
	}
	return err
}

// TraceResponse is the trace signal's OTLP/HTTP answer
// (HTTPOptions.Response); the metric and log signals have theirs.
func TraceResponse() proto.Message { return &coltracepb.ExportTraceServiceResponse{} }

// otlpTransport is the OTLP/HTTP client's transport: it refuses a 2xx
// answer that is not an OTLP response (ErrNotOTLP: the endpoint, the status
// and the Content-Type named) and records every OTLP success answer in the
// export's context. An OTLP response has the media type
// application/x-protobuf (or application/protobuf) or application/json and
// a body that parses as the signal's response; an empty body is an empty
// response (the protobuf encoding of an empty message is no byte) unless its
// Content-Type names another media type.
type otlpTransport struct {
	base     http.RoundTripper
	response func() proto.Message
}

func (t *otlpTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("reading the answer (%s): %w", resp.Status, err)
	}
	ctype := resp.Header.Get("Content-Type")
	media, _, _ := mime.ParseMediaType(ctype)
	reply := t.response()
	var perr error
	switch {
	case len(body) > maxResponse:
		perr = fmt.Errorf("a body of more than %d bytes", maxResponse)
	case len(body) == 0 && (ctype == "" || media == "application/x-protobuf" || media == "application/protobuf" || media == "application/json"):
	case media == "application/x-protobuf" || media == "application/protobuf":
		perr = proto.Unmarshal(body, reply)
	case media == "application/json":
		perr = protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(body, reply)
	default:
		perr = errors.New("the wrong Content-Type")
	}
	if perr != nil {
		return nil, notOTLP(resp, ctype, body, perr)
	}
	recordAnswer(req.Context(), reply)
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// notOTLP is the error of a 2xx answer that is not an OTLP response; the
// HTTP client puts the method and the endpoint's URL before it.
func notOTLP(resp *http.Response, ctype string, body []byte, cause error) error {
	if ctype == "" {
		ctype = "none"
	}
	return fmt.Errorf("%w: the endpoint answered %s with Content-Type %q (%v), %d bytes beginning %q",
		ErrNotOTLP, resp.Status, ctype, cause, len(body), body[:min(len(body), 32)])
}

// httpClient is the HTTP client Lens gives an OTLP/HTTP exporter: the
// exporter's own settings (its transport, proxy from the environment, the
// signal's TLS configuration and timeout) with the answers checked by
// otlpTransport.
func httpClient(sig Signal, response func() proto.Message) *http.Client {
	tr := &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   30 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: 1 * time.Second,
		TLSClientConfig:       sig.TLS,
	}
	timeout := sig.ClientTimeout
	if timeout <= 0 {
		timeout = DefaultOTLPTimeout
	}
	return &http.Client{Transport: &otlpTransport{base: tr, response: response}, Timeout: timeout}
}
