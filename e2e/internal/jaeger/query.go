package jaeger

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Types of Jaeger v1 tags (the "type" field of a tag).
const (
	TypeString  = "string"
	TypeBool    = "bool"
	TypeInt64   = "int64"
	TypeFloat64 = "float64"
	TypeBinary  = "binary"
)

// Trace is one trace as returned by the v1 HTTP API (/api/traces).
type Trace struct {
	// TraceID is 32 lowercase hex digits (Jaeger's shorter form for ids
	// whose high 64 bits are zero is padded).
	TraceID string `json:"traceID"`
	Spans   []Span `json:"spans"`
	// Processes maps a span's ProcessID to its process. Each distinct
	// resource (OTLP Resource) becomes one process: service.name is lifted
	// into ServiceName, the other resource attributes are its Tags.
	Processes map[string]Process `json:"processes"`
	Warnings  []string           `json:"warnings"`
}

// Span is one span of a v1 trace. Times are microseconds.
type Span struct {
	TraceID       string      `json:"traceID"`
	SpanID        string      `json:"spanID"`
	Flags         uint32      `json:"flags"`
	OperationName string      `json:"operationName"`
	References    []Reference `json:"references"`
	StartTime     uint64      `json:"startTime"` // µs since the Unix epoch
	Duration      uint64      `json:"duration"`  // µs
	Tags          []Tag       `json:"tags"`      // span (and scope) attributes
	Logs          []Log       `json:"logs"`      // span events
	ProcessID     string      `json:"processID"`
	Warnings      []string    `json:"warnings"`
}

// Reference links a span to another span (CHILD_OF or FOLLOWS_FROM).
type Reference struct {
	RefType string `json:"refType"`
	TraceID string `json:"traceID"`
	SpanID  string `json:"spanID"`
}

// Log is a span event.
type Log struct {
	Timestamp uint64 `json:"timestamp"` // µs since the Unix epoch
	Fields    []Tag  `json:"fields"`
}

// Process is the v1 form of an OTLP resource.
type Process struct {
	ServiceName string `json:"serviceName"`
	Tags        []Tag  `json:"tags"`
}

// Tag is a typed key/value of the v1 API, e.g.
// {"key":"nv.dl.rank","type":"int64","value":0}.
//
// Value holds the Go type matching Type: string, bool, int64, float64 or
// []byte (binary). An int64 that Jaeger sent as a JSON string (it does so
// outside ±2^53) is still an int64 here. A tag of an unknown type keeps the
// decoded JSON value (numbers as json.Number). OTLP arrays and maps arrive
// as string tags holding JSON (e.g. "[1]"); use TraceOTLP for their kinds.
type Tag struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// UnmarshalJSON decodes a tag and converts Value to the Go type of Type.
func (t *Tag) UnmarshalJSON(b []byte) error {
	var raw struct {
		Key   string          `json:"key"`
		Type  string          `json:"type"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	v, err := decodeTagValue(raw.Type, raw.Value)
	if err != nil {
		return fmt.Errorf("jaeger: tag %q (%s): %w", raw.Key, raw.Type, err)
	}
	*t = Tag{Key: raw.Key, Type: raw.Type, Value: v}
	return nil
}

func decodeTagValue(typ string, raw json.RawMessage) (any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	switch typ {
	case TypeString:
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case TypeBool:
		var v bool
		err := json.Unmarshal(raw, &v)
		return v, err
	case TypeInt64:
		text := string(raw)
		if raw[0] == '"' {
			if err := json.Unmarshal(raw, &text); err != nil {
				return nil, err
			}
		}
		return strconv.ParseInt(text, 10, 64)
	case TypeFloat64:
		var v float64
		err := json.Unmarshal(raw, &v)
		return v, err
	case TypeBinary:
		var v []byte // base64 in JSON
		err := json.Unmarshal(raw, &v)
		return v, err
	default:
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		var v any
		err := d.Decode(&v)
		return v, err
	}
}

// AsString returns the value of a string tag.
func (t Tag) AsString() (string, bool) {
	v, ok := t.Value.(string)
	return v, ok && t.Type == TypeString
}

// AsInt64 returns the value of an int64 tag.
func (t Tag) AsInt64() (int64, bool) {
	v, ok := t.Value.(int64)
	return v, ok && t.Type == TypeInt64
}

// AsBool returns the value of a bool tag.
func (t Tag) AsBool() (bool, bool) {
	v, ok := t.Value.(bool)
	return v, ok && t.Type == TypeBool
}

// AsFloat64 returns the value of a float64 tag.
func (t Tag) AsFloat64() (float64, bool) {
	v, ok := t.Value.(float64)
	return v, ok && t.Type == TypeFloat64
}

// String formats the tag as key=type(value), e.g. nv.dl.rank=int64(0) or
// nemo.run.id=string("abc").
func (t Tag) String() string {
	switch v := t.Value.(type) {
	case string:
		return fmt.Sprintf("%s=%s(%q)", t.Key, t.Type, v)
	case []byte:
		return fmt.Sprintf("%s=%s(%s)", t.Key, t.Type, base64.StdEncoding.EncodeToString(v))
	default:
		return fmt.Sprintf("%s=%s(%v)", t.Key, t.Type, v)
	}
}

// Tag returns the process tag with the given key.
func (p *Process) Tag(key string) (Tag, bool) { return findTag(p.Tags, key) }

// TagMap returns the process tags by key.
func (p *Process) TagMap() map[string]Tag { return tagMap(p.Tags) }

// Tag returns the span tag with the given key.
func (s *Span) Tag(key string) (Tag, bool) { return findTag(s.Tags, key) }

// TagMap returns the span tags by key.
func (s *Span) TagMap() map[string]Tag { return tagMap(s.Tags) }

func findTag(tags []Tag, key string) (Tag, bool) {
	for _, t := range tags {
		if t.Key == key {
			return t, true
		}
	}
	return Tag{}, false
}

func tagMap(tags []Tag) map[string]Tag {
	m := make(map[string]Tag, len(tags))
	for _, t := range tags {
		m[t.Key] = t
	}
	return m
}

// SpanProcess returns the process of span s.
func (t *Trace) SpanProcess(s *Span) (*Process, bool) {
	p, ok := t.Processes[s.ProcessID]
	if !ok {
		return nil, false
	}
	return &p, true
}

// SingleProcess returns the trace's only process; it is an error if the
// trace's spans came from more than one distinct resource.
func (t *Trace) SingleProcess() (*Process, error) {
	if len(t.Processes) != 1 {
		ids := make([]string, 0, len(t.Processes))
		for id, p := range t.Processes {
			ids = append(ids, id+"="+p.ServiceName)
		}
		sort.Strings(ids)
		return nil, fmt.Errorf("jaeger: trace %s has %d processes, want 1: %v", t.TraceID, len(t.Processes), ids)
	}
	for _, p := range t.Processes {
		return &p, nil
	}
	panic("unreachable")
}

// Span returns the first span with the given operation (span) name.
func (t *Trace) Span(operationName string) (*Span, bool) {
	for i := range t.Spans {
		if t.Spans[i].OperationName == operationName {
			return &t.Spans[i], true
		}
	}
	return nil, false
}

// v1 response envelope.
type v1Response struct {
	Data   []Trace `json:"data"`
	Errors []struct {
		Code    int    `json:"code"`
		Msg     string `json:"msg"`
		TraceID string `json:"traceID"`
	} `json:"errors"`
}

func (r *v1Response) err() error {
	if len(r.Errors) == 0 {
		return nil
	}
	msgs := make([]string, len(r.Errors))
	for i, e := range r.Errors {
		msgs[i] = fmt.Sprintf("%d %s", e.Code, e.Msg)
	}
	return errors.New(strings.Join(msgs, "; "))
}

// NormalizeTraceID returns a trace id as 32 lowercase hex digits (Jaeger
// prints ids whose high half is zero with 16 digits).
func NormalizeTraceID(id string) string { return padHex(id, 32) }

func padHex(id string, n int) string {
	id = strings.ToLower(strings.TrimSpace(id))
	if len(id) < n {
		id = strings.Repeat("0", n-len(id)) + id
	}
	return id
}

func normalize(traces []Trace) {
	for i := range traces {
		t := &traces[i]
		t.TraceID = NormalizeTraceID(t.TraceID)
		for k := range t.Spans {
			s := &t.Spans[k]
			s.TraceID = NormalizeTraceID(s.TraceID)
			s.SpanID = padHex(s.SpanID, 16)
			for r := range s.References {
				s.References[r].TraceID = NormalizeTraceID(s.References[r].TraceID)
				s.References[r].SpanID = padHex(s.References[r].SpanID, 16)
			}
		}
	}
}

// Trace fetches one trace by id (hex, as trace.TraceID.String() prints it)
// from GET /api/traces/<id>, polling every PollInterval while Jaeger answers
// 404 (spans become visible only after the 100 ms batch timeout). It returns
// as soon as any span of the trace is visible; use WaitSpans for traces with
// several spans. The wait ends with ctx, or after DefaultWait if ctx has no
// deadline.
func (j *Jaeger) Trace(ctx context.Context, traceID string) (*Trace, error) {
	return j.WaitSpans(ctx, traceID, 1)
}

// WaitSpans is Trace, polling until the trace has at least n spans.
func (j *Jaeger) WaitSpans(ctx context.Context, traceID string, n int) (*Trace, error) {
	id := NormalizeTraceID(traceID)
	u := j.QueryURL() + "/api/traces/" + url.PathEscape(id)
	var found *Trace
	err := j.poll(ctx, fmt.Sprintf("trace %s with %d span(s)", id, n), func(ctx context.Context) (bool, string, error) {
		var r v1Response
		if found, why, err := j.getFound(ctx, u, &r); !found {
			return false, why, err
		}
		if err := r.err(); err != nil {
			return false, "", fmt.Errorf("GET %s: %w", u, err)
		}
		normalize(r.Data)
		for i := range r.Data {
			if r.Data[i].TraceID == id {
				found = &r.Data[i]
				if len(found.Spans) >= n {
					return true, "", nil
				}
				return false, fmt.Sprintf("%d span(s) visible", len(found.Spans)), nil
			}
		}
		return false, "trace not in response", nil
	})
	if err != nil {
		return nil, err
	}
	return found, nil
}

// FindTraces runs one search, GET /api/traces?service=<service>&tags=<JSON>,
// without waiting. service is required by Jaeger. tags (may be nil) are
// ANDed; Jaeger compares their string forms against span, scope, resource
// and event attributes, so {"nv.dl.rank":"0"} matches the integer 0 and a hit
// does not prove the attribute sits on the resource (check Process tags for
// that). The search covers the last 48 h and returns at most 1000 traces, in
// no particular order.
func (j *Jaeger) FindTraces(ctx context.Context, service string, tags map[string]string) ([]Trace, error) {
	if service == "" {
		return nil, errors.New("jaeger: FindTraces: service is required")
	}
	q := url.Values{}
	q.Set("service", service)
	q.Set("limit", "1000")
	if len(tags) > 0 {
		b, err := json.Marshal(tags)
		if err != nil {
			return nil, fmt.Errorf("jaeger: FindTraces: %w", err)
		}
		q.Set("tags", string(b))
	}
	u := j.QueryURL() + "/api/traces?" + q.Encode()
	status, body, err := j.get(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("jaeger: GET %s: %w", u, err)
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("jaeger: GET %s: HTTP %d: %s%s", u, status, snippet(body), j.logTailSuffix())
	}
	var r v1Response
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("jaeger: GET %s: decoding: %w: %s", u, err, snippet(body))
	}
	if err := r.err(); err != nil {
		return nil, fmt.Errorf("jaeger: GET %s: %w", u, err)
	}
	normalize(r.Data)
	if r.Data == nil {
		r.Data = []Trace{}
	}
	return r.Data, nil
}

// WaitTraces polls FindTraces every PollInterval until at least n traces
// match and returns them (possibly more than n). The wait ends with ctx, or
// after DefaultWait if ctx has no deadline.
func (j *Jaeger) WaitTraces(ctx context.Context, service string, tags map[string]string, n int) ([]Trace, error) {
	var found []Trace
	what := fmt.Sprintf("%d trace(s) of service %q with tags %v", n, service, tags)
	err := j.poll(ctx, what, func(ctx context.Context) (bool, string, error) {
		traces, err := j.FindTraces(ctx, service, tags)
		if err != nil {
			return false, "", err
		}
		found = traces
		return len(traces) >= n, fmt.Sprintf("%d trace(s) visible", len(traces)), nil
	})
	if err != nil {
		return nil, err
	}
	return found, nil
}

// poll calls try every PollInterval until it reports done, fails, ctx ends
// (or DefaultWait passes without a ctx deadline) or Jaeger exits. try's
// string describes the last state for the timeout error.
func (j *Jaeger) poll(ctx context.Context, what string, try func(context.Context) (done bool, state string, err error)) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultWait)
		defer cancel()
	}
	began := time.Now()
	ticker := time.NewTicker(PollInterval)
	defer ticker.Stop()
	var state string
	for {
		done, s, err := try(ctx)
		if done {
			return nil
		}
		switch {
		case err == nil:
			state = s
		case ctx.Err() == nil:
			return fmt.Errorf("jaeger: waiting for %s: %w%s", what, err, j.logTailSuffix())
		case state == "":
			state = err.Error() // the request was cut by the deadline; keep an earlier state
		}
		select {
		case <-j.done:
			return fmt.Errorf("jaeger: waiting for %s: process exited: %v%s", what, j.waitErr, j.logTailSuffix())
		case <-ctx.Done():
			return fmt.Errorf("jaeger: waiting for %s: %w after %v (last: %s)%s",
				what, ctx.Err(), time.Since(began).Round(time.Millisecond), state, j.logTailSuffix())
		case <-ticker.C:
		}
	}
}

// getFound GETs u and decodes a 200 answer's JSON into v. A 404 is "not
// there yet" (found false, with a reason for the poll's message), any other
// status or undecodable body an error.
func (j *Jaeger) getFound(ctx context.Context, u string, v any) (found bool, why string, err error) {
	status, body, err := j.get(ctx, u)
	if err != nil {
		return false, "", err
	}
	switch status {
	case http.StatusNotFound:
		return false, "404 not found", nil
	case http.StatusOK:
	default:
		return false, "", fmt.Errorf("GET %s: HTTP %d: %s", u, status, snippet(body))
	}
	if err := json.Unmarshal(body, v); err != nil {
		return false, "", fmt.Errorf("GET %s: decoding: %w: %s", u, err, snippet(body))
	}
	return true, "", nil
}
