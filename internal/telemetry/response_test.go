package telemetry

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TestOTLPTransportAnswers: the OTLP/HTTP client Lens gives the exporters
// takes a 2xx answer for an OTLP response only when its Content-Type is
// protobuf or JSON and its body parses (an empty body is an empty
// response unless another media type is named); it records the partial
// success of every OTLP answer, whatever the parameters of its media type
// (docs/tracing.md#export-counts).
func TestOTLPTransportAnswers(t *testing.T) {
	t.Parallel()
	partial, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{
		PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: 5, ErrorMessage: "too big"}})
	for _, tc := range []struct {
		name, ctype, body string
		status            int
		notOTLP           bool  // ErrNotOTLP
		delivered         bool  // recorded as a success answer
		rejected          int64 // recorded
	}{
		{"protobuf, partial", "application/x-protobuf", string(partial), 200, false, true, 5},
		{"protobuf, empty", "application/x-protobuf", "", 200, false, true, 0},
		{"no type, empty", "", "", 200, false, true, 0},
		{"json, partial", "application/json", `{"partialSuccess":{"rejectedSpans":"5","errorMessage":"too big"}}`, 200, false, true, 5},
		{"json with charset, partial", "application/json; charset=utf-8", `{"partial_success":{"rejected_spans":5}}`, 200, false, true, 5},
		{"json, empty object", "application/json", `{}`, 200, false, true, 0},
		{"html page", "text/html; charset=utf-8", "<html>log in</html>", 200, true, false, 0},
		{"html, empty", "text/html", "", 200, true, false, 0},
		{"no type, a body", "", "OK", 200, true, false, 0},
		{"protobuf that does not parse", "application/x-protobuf", "<html>", 200, true, false, 0},
		{"json that does not parse", "application/json", "<html>", 200, true, false, 0},
		{"too long", "application/x-protobuf", strings.Repeat("\x00", maxResponse+1), 200, true, false, 0},
		{"202 html", "text/html", "<p>accepted</p>", 202, true, false, 0},
		{"an error is the exporter's", "text/html", "<p>bad gateway</p>", 502, false, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.ctype != "" {
					w.Header().Set("Content-Type", tc.ctype)
				}
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			ctx, a := withAnswer(context.Background())
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/traces", bytes.NewReader(nil))
			resp, err := httpClient(Signal{}, TraceResponse).Do(req)
			if err == nil {
				resp.Body.Close()
			}
			if errors.Is(err, ErrNotOTLP) != tc.notOTLP {
				t.Fatalf("error %v, want ErrNotOTLP: %v", err, tc.notOTLP)
			}
			if tc.notOTLP && (!strings.Contains(err.Error(), srv.URL) || !strings.Contains(err.Error(), http.StatusText(tc.status))) {
				t.Errorf("error %q: want the endpoint and the status named", err)
			}
			delivered, p := a.result()
			var rejected int64
			if p != nil {
				rejected = p.Rejected
			}
			if delivered != tc.delivered || rejected != tc.rejected {
				t.Errorf("recorded delivered=%v rejected=%d, want %v, %d", delivered, rejected, tc.delivered, tc.rejected)
			}
		})
	}
}

// TestAnsweredPartialSuccess: an export whose collector answered a partial
// success is that partial success (not the exporter's error); a warning
// without rejection too; one without an answer keeps its error.
func TestAnsweredPartialSuccess(t *testing.T) {
	t.Parallel()
	exporterErr := errors.New("OTLP partial success: too big (5 spans rejected)")
	reply := func(r int64, msg string) func(context.Context) error {
		return func(ctx context.Context) error {
			recordAnswer(ctx, &coltracepb.ExportTraceServiceResponse{
				PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: r, ErrorMessage: msg}})
			return exporterErr
		}
	}
	var rej *RejectedError
	if err := answered(context.Background(), reply(5, "too big")); !errors.As(err, &rej) || rej.Rejected != 5 || rej.Message != "too big" || rej.What != "spans" {
		t.Errorf("partial success: %v, want a RejectedError of 5 spans", err)
	}
	if err := answered(context.Background(), reply(0, "")); err != nil {
		t.Errorf("an empty partial success: %v, want nil", err)
	}
	if err := answered(context.Background(), func(context.Context) error { return exporterErr }); err != exporterErr {
		t.Errorf("no answer: %v, want the exporter's error", err)
	}
}

// answeringExporter answers its exports as a collector would through Lens's
// transport: call i (from 0) gets the partial success replies[i] (none
// past the end), and returns the exporters' partial-success error.
type answeringExporter struct {
	replies []*coltracepb.ExportTracePartialSuccess
	calls   int
}

func (e *answeringExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	i := e.calls
	e.calls++
	if i >= len(e.replies) {
		recordAnswer(ctx, &coltracepb.ExportTraceServiceResponse{})
		return nil
	}
	recordAnswer(ctx, &coltracepb.ExportTraceServiceResponse{PartialSuccess: e.replies[i]})
	return errors.New("OTLP partial success")
}

func (e *answeringExporter) Shutdown(context.Context) error { return nil }

// TestPipelineCountsRejected: the pipeline counts the rejected spans of a
// partial success (at most the batch, never fewer than none) as Rejected
// and the rest as Exported, reports each partial success (a warning
// without rejection too) and keeps the first; none is a failed export.
func TestPipelineCountsRejected(t *testing.T) {
	t.Parallel()
	exp := &answeringExporter{replies: []*coltracepb.ExportTracePartialSuccess{
		{RejectedSpans: 3, ErrorMessage: "three"},
		{RejectedSpans: 100, ErrorMessage: "all"},
		{RejectedSpans: -1, ErrorMessage: "negative"},
	}}
	var reports []string
	p, tr := newTestPipeline(t, exp, testSettings(100, 10), func(err error) { reports = append(reports, err.Error()) })
	for range 4 {
		endSpans(tr, 10)
		if err := p.ForceFlush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	// The worker reports after the flush returns: Shutdown waits for it.
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := p.Counts()
	if c.Exported != 7+0+10+10 || c.Rejected != 3+10 || c.Failed != 0 || c.Pending != 0 {
		t.Errorf("counts %+v, want 27 exported, 13 rejected, none failed", c)
	}
	if err := checkCounts(c, 0); err != nil {
		t.Error(err)
	}
	if r := p.FirstRejection(); r == nil || r.Rejected != 3 || r.Sent != 10 || r.Message != "three" {
		t.Errorf("first rejection %+v, want 3 of 10, \"three\"", r)
	}
	if len(reports) != 3 || !strings.Contains(reports[2], "with a warning: negative") || p.FirstError() != nil {
		t.Errorf("reports %q, first error %v; want three reports, the last a warning, no failed export", reports, p.FirstError())
	}
}

// TestPartialSuccessEverySignal: the partial success of each signal's
// response is read, with its items named; an absent or empty one is none.
func TestPartialSuccessEverySignal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		reply proto.Message
		want  string
	}{
		{&coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: 2, ErrorMessage: "m"}},
			"the collector rejected 2 spans (partial success, not retried): m"},
		{&colmetricspb.ExportMetricsServiceResponse{PartialSuccess: &colmetricspb.ExportMetricsPartialSuccess{RejectedDataPoints: 3}},
			"the collector rejected 3 metric data points (partial success, not retried): no message"},
		{&collogspb.ExportLogsServiceResponse{PartialSuccess: &collogspb.ExportLogsPartialSuccess{ErrorMessage: "w"}},
			"the collector kept all log records, with a warning: w"},
		{&collogspb.ExportLogsServiceResponse{PartialSuccess: &collogspb.ExportLogsPartialSuccess{}}, ""},
		{&coltracepb.ExportTraceServiceResponse{}, ""},
	} {
		got := ""
		if e := partialSuccess(tc.reply); e != nil {
			got = e.Error()
		}
		if got != tc.want {
			t.Errorf("partialSuccess(%v) = %q, want %q", tc.reply, got, tc.want)
		}
	}
}
