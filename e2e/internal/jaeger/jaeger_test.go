package jaeger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestConfigYAMLLoopbackOnly(t *testing.T) {
	for _, want := range []string{
		"use_v2: true",
		"level: none",
		"enable_tracing: false",
		"timeout: 100ms",
		"${env:E2E_OTLP_GRPC_PORT:-4317}",
		"${env:E2E_OTLP_HTTP_PORT:-4318}",
		"${env:E2E_QUERY_PORT:-16686}",
		"${env:E2E_QUERY_GRPC_PORT:-16685}",
		"${env:E2E_HEALTH_PORT:-13133}",
	} {
		if !bytes.Contains(ConfigYAML, []byte(want)) {
			t.Errorf("config.yaml lacks %q", want)
		}
	}
	for _, line := range strings.Split(string(ConfigYAML), "\n") {
		if strings.Contains(line, "endpoint:") && !strings.Contains(line, `"127.0.0.1:`) {
			t.Errorf("endpoint not on loopback: %s", strings.TrimSpace(line))
		}
	}
}

func TestTagDecoding(t *testing.T) {
	in := `[
		{"key":"nv.dl.rank","type":"int64","value":0},
		{"key":"big","type":"int64","value":"9007199254740993"},
		{"key":"nemo.run.id","type":"string","value":"007"},
		{"key":"ok","type":"bool","value":true},
		{"key":"f","type":"float64","value":1.5},
		{"key":"b","type":"binary","value":"AAE="},
		{"key":"odd","type":"weird","value":12345678901234567890}
	]`
	var tags []Tag
	if err := json.Unmarshal([]byte(in), &tags); err != nil {
		t.Fatal(err)
	}
	p := Process{Tags: tags}
	if tag, _ := p.Tag("nv.dl.rank"); tag.Value != int64(0) {
		t.Errorf("rank = %#v", tag.Value)
	} else if v, ok := tag.AsInt64(); !ok || v != 0 {
		t.Errorf("AsInt64 = %v, %v", v, ok)
	} else if _, ok := tag.AsString(); ok {
		t.Error("AsString on an int64 tag succeeded")
	}
	if tag, _ := p.Tag("big"); tag.Value != int64(9007199254740993) {
		t.Errorf("big = %#v", tag.Value)
	}
	if tag, _ := p.Tag("nemo.run.id"); tag.Value != "007" || tag.String() != `nemo.run.id=string("007")` {
		t.Errorf("run id = %#v (%s)", tag.Value, tag)
	}
	if v, ok := p.TagMap()["ok"].AsBool(); !ok || !v {
		t.Errorf("bool = %v, %v", v, ok)
	}
	if v, ok := p.TagMap()["f"].AsFloat64(); !ok || v != 1.5 {
		t.Errorf("float = %v, %v", v, ok)
	}
	if v, _ := p.TagMap()["b"].Value.([]byte); !bytes.Equal(v, []byte{0, 1}) {
		t.Errorf("binary = %#v", p.TagMap()["b"].Value)
	}
	if v, _ := p.TagMap()["odd"].Value.(json.Number); v != "12345678901234567890" {
		t.Errorf("unknown type = %#v", p.TagMap()["odd"].Value)
	}
	if _, ok := p.Tag("missing"); ok {
		t.Error("found a missing tag")
	}
	if err := json.Unmarshal([]byte(`{"key":"x","type":"int64","value":"1.5"}`), new(Tag)); err == nil {
		t.Error("a non-integer int64 tag decoded")
	}
}

func TestNormalizeTraceID(t *testing.T) {
	if got := NormalizeTraceID("ABCDEF0123456789"); got != "0000000000000000abcdef0123456789" {
		t.Errorf("got %s", got)
	}
}

func TestOTLPValue(t *testing.T) {
	var kvs []OTLPKeyValue
	in := `[{"key":"r","value":{"intValue":"0"}},{"key":"n","value":{"intValue":5}},
		{"key":"s","value":{"stringValue":"abc"}},{"key":"e","value":{}},
		{"key":"a","value":{"arrayValue":{"values":[{"boolValue":true}]}}}]`
	if err := json.Unmarshal([]byte(in), &kvs); err != nil {
		t.Fatal(err)
	}
	r := OTLPResource{Attributes: kvs}
	for key, want := range map[string]string{"r": "int(0)", "n": "int(5)", "s": `string("abc")`, "e": "empty()", "a": "array[bool(true)]"} {
		if v, ok := r.Attr(key); !ok || v.String() != want {
			t.Errorf("%s = %v (%v), want %s", key, v, ok, want)
		}
	}
}

func TestLogTail(t *testing.T) {
	dir := t.TempDir()
	j := &Jaeger{logPath: filepath.Join(dir, "log")}
	if err := os.WriteFile(j.logPath, []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int]string{0: "", 1: "c", 2: "b\nc", 5: "a\nb\nc"} {
		if got := j.LogTail(n); got != want {
			t.Errorf("LogTail(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestFreePortsDistinct(t *testing.T) {
	p, err := freePorts()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, port := range []int{p.OTLPGRPC, p.OTLPHTTP, p.Query, p.QueryGRPC, p.Health} {
		if port <= 0 || seen[port] {
			t.Fatalf("bad ports %+v", p)
		}
		seen[port] = true
	}
}

func fakeBinary(t *testing.T, script string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fake-jaeger")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestStartEarlyExitQuotesLog(t *testing.T) {
	bin := fakeBinary(t, `echo "starting with $1"; echo 'listen tcp 127.0.0.1:1: bind: address already in use' >&2; exit 1`)
	_, err := Start(context.Background(), bin, t.TempDir())
	if err == nil {
		t.Fatal("Start succeeded")
	}
	if !errors.Is(err, errPortInUse) || !strings.Contains(err.Error(), "address already in use") ||
		!strings.Contains(err.Error(), "--config=file:") || !strings.Contains(err.Error(), "exit status 1") {
		t.Errorf("error lacks the exit status or log tail: %v", err)
	}
}

func TestStartMissingBinary(t *testing.T) {
	if _, err := Start(context.Background(), filepath.Join(t.TempDir(), "nope"), ""); err == nil ||
		!strings.Contains(err.Error(), "build-jaeger.sh") {
		t.Errorf("err = %v", err)
	}
}

// TestStartReadyAndStop runs a fake Jaeger: a shell script that writes the
// health port it was given to a file and waits for SIGTERM, while the test
// serves /status on that port so that Start sees it ready.
func TestStartReadyAndStop(t *testing.T) {
	dir := t.TempDir()
	portFile := filepath.Join(dir, "port")
	bin := fakeBinary(t, `echo "$E2E_HEALTH_PORT" > `+portFile+`.tmp && mv `+portFile+`.tmp `+portFile+`; trap 'exit 0' TERM; while :; do sleep 0.05; done`)
	go func() {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			b, err := os.ReadFile(portFile)
			if err == nil {
				port, _ := strconv.Atoi(strings.TrimSpace(string(b)))
				l, err := net.Listen("tcp", hostPort(port))
				if err != nil {
					return
				}
				srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/status" {
						_, _ = w.Write([]byte(`{"healthy":true}`))
						return
					}
					http.NotFound(w, r)
				})}
				t.Cleanup(func() { _ = srv.Close() })
				_ = srv.Serve(l)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	j, err := Start(ctx, bin, filepath.Join(dir, "work"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(j.OTLPGRPCEndpoint(), "127.0.0.1:") || !strings.HasPrefix(j.QueryURL(), "http://127.0.0.1:") {
		t.Errorf("endpoints %s %s", j.OTLPGRPCEndpoint(), j.QueryURL())
	}
	if err := j.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if err := j.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	select {
	case <-j.Done():
	default:
		t.Error("Done not closed after Stop")
	}
}

// fakeQuery returns a Jaeger whose query URL is served by h.
func fakeQuery(t *testing.T, h http.Handler) *Jaeger {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	return &Jaeger{
		ports:   Ports{Query: port},
		logPath: filepath.Join(t.TempDir(), "log"),
		client:  srv.Client(),
		done:    make(chan struct{}),
	}
}

func TestTracePollsUntilFound(t *testing.T) {
	var calls atomic.Int32
	j := fakeQuery(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/traces/0000000000000000000000000000abcd" {
			http.Error(w, "bad path "+r.URL.Path, http.StatusBadRequest)
			return
		}
		if calls.Add(1) < 3 {
			http.Error(w, `{"data":null,"errors":[{"code":404,"msg":"trace not found"}]}`, http.StatusNotFound)
			return
		}
		_, _ = w.Write([]byte(`{"data":[{"traceID":"abcd","spans":[{"traceID":"abcd","spanID":"1","operationName":"op","processID":"p1"}],
			"processes":{"p1":{"serviceName":"probe","tags":[{"key":"nv.dl.rank","type":"int64","value":3}]}}}]}`))
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tr, err := j.Trace(ctx, "ABCD")
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 3 || tr.TraceID != NormalizeTraceID("abcd") || tr.Spans[0].SpanID != "0000000000000001" {
		t.Fatalf("calls %d, trace %+v", calls.Load(), tr)
	}
	p, err := tr.SingleProcess()
	if err != nil {
		t.Fatal(err)
	}
	if sp, ok := tr.SpanProcess(&tr.Spans[0]); !ok || sp.ServiceName != "probe" {
		t.Errorf("SpanProcess = %v, %v", sp, ok)
	}
	if tag, ok := p.Tag("nv.dl.rank"); !ok || tag.Value != int64(3) {
		t.Errorf("rank tag = %v", tag)
	}
}

func TestTraceTimesOut(t *testing.T) {
	j := fakeQuery(t, http.NotFoundHandler())
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := j.Trace(ctx, "abcd")
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "404") {
		t.Errorf("err = %v", err)
	}
}

func TestFindAndWaitTraces(t *testing.T) {
	var calls atomic.Int32
	j := fakeQuery(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		var tags map[string]string
		if err := json.Unmarshal([]byte(q.Get("tags")), &tags); err != nil || q.Get("service") != "probe" || tags["nv.dl.rank"] != "0" {
			http.Error(w, "bad query "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		if calls.Add(1) < 2 {
			_, _ = w.Write([]byte(`{"data":[]}`))
			return
		}
		_, _ = w.Write([]byte(`{"data":[{"traceID":"01"},{"traceID":"02"}]}`))
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := j.WaitTraces(ctx, "probe", map[string]string{"nv.dl.rank": "0"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || calls.Load() != 2 {
		t.Fatalf("got %d traces after %d calls", len(got), calls.Load())
	}
	if _, err := j.FindTraces(ctx, "", nil); err == nil {
		t.Error("FindTraces without service succeeded")
	}
	if _, err := j.FindTraces(ctx, "probe", map[string]string{"nv.dl.rank": "1"}); err == nil ||
		!strings.Contains(err.Error(), "HTTP 400") {
		t.Errorf("err = %v", err)
	}
}
