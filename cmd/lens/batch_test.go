package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/collectortest"
	"github.com/nemolens/lens-go/internal/faulttest"
	"github.com/nemolens/lens-go/internal/telemetry"
)

// The batch commands export every span of a valid set, of any size, or
// exit non-zero saying how many went and why (docs/tracing.md#batch-export).

// bigSet is n span values: flat roots, or a chain (each the parent of the
// next) when chained.
func bigSet(n int, chained bool) []string {
	args := make([]string, 0, 2*n)
	for i := range n {
		spec := fmt.Sprintf("s%d,%d,%d", i, 1700000000+i, 1700000001+i)
		if chained && i > 0 {
			spec += fmt.Sprintf(",s%d", i-1)
		}
		args = append(args, "--span", spec)
	}
	return args
}

// TestEmitSpansSaysHowManyAndWhy: when the export fails, lens emit-spans
// exits 1 with the count and the first export error; when the flush
// timeout ends the export with spans still waiting, the count and the
// timeout.
func TestEmitSpansSaysHowManyAndWhy(t *testing.T) {
	t.Parallel()
	bad := collectortest.New(t, "http/protobuf", collectortest.Fail)
	env := environ.Map{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT": bad.Endpoint,
		"OTEL_BSP_MAX_QUEUE_SIZE": "4", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "2"}
	r := runIn(t, env, "", append([]string{"emit-spans", "--flush-timeout", "1m"}, bigSet(10, false)...)...)
	if r.code != 1 || !strings.Contains(r.stderr, "0 of 10 spans exported (10 failed, 0 dropped, 0 rejected)") || !strings.Contains(r.stderr, "500") {
		t.Errorf("failing collector: %v, want exit 1, the count and the HTTP status", r)
	}

	hang := collectortest.New(t, "http/protobuf", collectortest.Hang)
	env["OTEL_EXPORTER_OTLP_ENDPOINT"] = hang.Endpoint
	r = runIn(t, env, "", append([]string{"emit-spans", "--flush-timeout", "300ms"}, bigSet(10, false)...)...)
	if r.code != 1 || !strings.Contains(r.stderr, "0 of 10 spans exported") || !strings.Contains(r.stderr, "dropped") {
		t.Errorf("hanging collector: %v, want exit 1 and the count", r)
	}
}

// fakeSacctLines is sacct output ('|'-separated, as recorded) of one job with steps
// numbered steps, as the e2e cluster's 22.05 writes it.
func fakeSacctLines(job string, steps int) []byte {
	var b bytes.Buffer
	row := func(id, name, start, end string) {
		fmt.Fprintf(&b, "%s|%s|%s|COMPLETED|0:0|2026-12-01T10:00:00|2026-12-01T10:00:01|%s|%s|42|c1|node1\n", id, id, name, start, end)
	}
	row(job, "train", "2026-12-01T10:00:02", "2026-12-02T10:00:00")
	row(job+".batch", "batch", "2026-12-01T10:00:02", "2026-12-02T10:00:00")
	row(job+".extern", "extern", "2026-12-01T10:00:02", "2026-12-02T10:00:00")
	base := time.Date(2026, 12, 1, 10, 0, 3, 0, time.UTC)
	for i := range steps {
		s := base.Add(time.Duration(i%80000) * time.Second)
		row(job+"."+strconv.Itoa(i), "step", s.Format("2006-01-02T15:04:05"), s.Add(time.Second).Format("2006-01-02T15:04:05"))
	}
	return b.Bytes()
}

// pacedGate is a collector's Gate that accepts trace export n no earlier
// than n×pace after the first export arrived: however fast the exporter,
// n exports take at least n×pace; a slower exporter is not delayed more.
func pacedGate(pace time.Duration) func(int) bool {
	var once sync.Once
	var start time.Time
	return func(n int) bool {
		once.Do(func() { start = time.Now() })
		time.Sleep(time.Until(start.Add(time.Duration(n) * pace)))
		return true
	}
}

// TestSlowCollectorGetsEverySpan: --flush-timeout bounds the export
// of lens reckon and lens emit-spans by its progress, not its length
// (docs/tracing.md#idle-bound): a collector that takes longer than
// --flush-timeout for the whole export, but accepts a batch more often
// than that, gets every span (on edd0320 the export ended after
// --flush-timeout, 100 or so of 207 spans in). The bound is five times
// the pace: only a machine that stalls lens for seconds between two
// batches of 20 spans ends it.
func TestSlowCollectorGetsEverySpan(t *testing.T) {
	t.Parallel()
	const pace, flush = time.Second, 5 * time.Second
	for _, c := range []struct {
		name string
		want int // spans, in batches of 20: 8 or more, 8 s or more
		run  func(env environ.Map) (code int, stderr string)
	}{
		{"reckon", 207, func(env environ.Map) (int, string) {
			sacct, _ := fakeSacct(t, fakeSacctLines("5", 200))
			r := runReckon(t, env, sacct, "--flush-timeout", flush.String(), "5")
			return r.code, r.stderr
		}},
		{"emit-spans", 160, func(env environ.Map) (int, string) {
			r := runIn(t, env, "", append([]string{"emit-spans", "--flush-timeout", flush.String()}, bigSet(160, false)...)...)
			return r.code, r.stderr
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			col := collectortest.New(t, "http/protobuf", collectortest.OK)
			col.Gate(pacedGate(pace))
			env := environ.Map{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT": col.Endpoint,
				"OTEL_BSP_MAX_QUEUE_SIZE": "40", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "20"}
			code, stderr := c.run(env)
			if got := len(col.Spans()); code != 0 || got != c.want {
				t.Fatalf("exit %d, %d of %d spans at the receiver; stderr %.300q", code, got, c.want, stderr)
			}
			if n := col.Requests(collectortest.Traces); time.Duration(n)*pace <= flush {
				t.Fatalf("%d exports at one per %v: no longer than --flush-timeout %v, the test proves nothing", n, pace, flush)
			}
		})
	}
}

// TestReckonCollectorStopsAccepting: a collector that stops accepting
// (it hangs on its fourth export) ends lens reckon's export one
// --flush-timeout after its last accepted batch, not before; lens says
// how many spans went and why.
func TestReckonCollectorStopsAccepting(t *testing.T) {
	t.Parallel()
	const accepted, flush = 3, time.Second
	col := collectortest.New(t, "http/protobuf", collectortest.OK)
	var mu sync.Mutex
	var last time.Time
	col.Gate(func(n int) bool {
		if n > accepted {
			return false
		}
		mu.Lock()
		last = time.Now()
		mu.Unlock()
		return true
	})
	sacct, _ := fakeSacct(t, fakeSacctLines("5", 200))
	env := environ.Map{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT": col.Endpoint,
		"OTEL_BSP_MAX_QUEUE_SIZE": "40", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "20"}
	var r reckonResult
	if err := faulttest.NoHang(t, "lens reckon", func() error {
		r = runReckon(t, env, sacct, "--flush-timeout", flush.String(), "5")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ended := time.Now()
	want := fmt.Sprintf("export: %d of 207 spans exported", accepted*20)
	if r.code != 1 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "no batch was accepted for --flush-timeout 1s") {
		t.Errorf("%+v; want exit 1, %q and the idle bound as the reason", r, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if idle := ended.Sub(last); idle < flush {
		t.Errorf("the export ended %v after the last accepted batch, before --flush-timeout %v", idle, flush)
	}
}

// writeFakeSacct writes an executable sacct into a new directory and
// returns the directory: it answers --helpformat, and otherwise runs body.
func writeFakeSacct(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\nif [ \"$1\" = --helpformat ]; then echo 'JobID JobIDRaw JobName'; exit 0; fi\n" + body + "\n"
	if err := os.WriteFile(filepath.Join(dir, "sacct"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// gone waits until pid is no process or a zombie (its parent was killed;
// init reaps it), up to a minute, and reports whether it is.
func gone(pid int) bool {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		if f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])); len(f) > 0 && f[0] == "Z" {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

// startReckon starts the lens binary with args and PATH led by dir, and
// returns the pid the fake sacct writes into fifo, and the command's end.
func startReckon(t *testing.T, dir, fifo string, args ...string) (*exec.Cmd, *bytes.Buffer, int, chan error) {
	t.Helper()
	cmd := exec.Command(lensBin, append([]string{"reckon"}, args...)...)
	cmd.Env = []string{"PATH=" + dir + ":" + os.Getenv("PATH"), "OTEL_TRACES_EXPORTER=console"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	pid := make(chan string, 1)
	go func() {
		b, _ := os.ReadFile(fifo) // until the script has written and closed it
		pid <- strings.TrimSpace(string(b))
	}()
	select {
	case p := <-pid:
		n, err := strconv.Atoi(p)
		if err != nil {
			t.Fatalf("pid %q: %v", p, err)
		}
		return cmd, &stderr, n, done
	case err := <-done:
		// Unblock the reader.
		if f, ferr := os.OpenFile(fifo, os.O_WRONLY, 0); ferr == nil {
			f.Close()
		}
		t.Fatalf("lens reckon ended before sacct ran: %v, stderr %q", err, stderr.String())
	}
	return nil, nil, 0, nil
}

// hangingSacct writes a fake sacct that starts a child, writes the child's
// pid into the returned FIFO, and waits for it (an hour).
func hangingSacct(t *testing.T) (dir, fifo string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("process groups read from /proc")
	}
	fifo = filepath.Join(t.TempDir(), "pid")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	return writeFakeSacct(t, "sleep 3600 &\necho $! > "+fifo+"\nwait"), fifo
}

// TestReckonSacctBounded: a sacct that never answers is killed, with the
// child it started, after --sacct-timeout, and lens reckon says so (on
// 85caa10 it waited without a bound).
func TestReckonSacctBounded(t *testing.T) {
	t.Parallel()
	dir, fifo := hangingSacct(t)
	cmd, stderr, child, done := startReckon(t, dir, fifo, "--sacct-timeout", "200ms", "7")
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "--sacct-timeout 200ms") {
			t.Errorf("%v, stderr %q; want exit 1 naming --sacct-timeout", err, stderr.String())
		}
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("lens reckon still waits for sacct after a minute")
	}
	if !gone(child) {
		_ = syscall.Kill(child, syscall.SIGKILL)
		t.Errorf("sacct's child %d outlived lens reckon", child)
	}
}

// TestReckonSignalKillsSacct: SIGTERM to lens reckon kills sacct's process
// group, then lens dies by SIGTERM (on 85caa10 sacct kept running).
func TestReckonSignalKillsSacct(t *testing.T) {
	t.Parallel()
	dir, fifo := hangingSacct(t)
	cmd, stderr, child, done := startReckon(t, dir, fifo, "7")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := <-done
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("lens reckon: %v, stderr %q; want death by SIGTERM", err, stderr.String())
	}
	if !gone(child) {
		_ = syscall.Kill(child, syscall.SIGKILL)
		t.Errorf("sacct's child %d outlived lens reckon", child)
	}
}

// TestReckonSacctStderrCut: 2 MB of a failing sacct's stderr become one
// line of at most MaxErrorText bytes and the count of the rest.
func TestReckonSacctStderrCut(t *testing.T) {
	t.Parallel()
	dir := writeFakeSacct(t, "head -c 2000000 /dev/zero | tr '\\0' 'e' >&2\nexit 1")
	r := runBin(t, map[string]string{"PATH": dir + ":" + os.Getenv("PATH"), "OTEL_TRACES_EXPORTER": "console"}, "", "reckon", "7")
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if r.code != 1 || len(lines) != 1 || len(lines[0]) > 600 || !strings.Contains(lines[0], "(1999744 bytes cut)") {
		t.Errorf("exit %d, %d lines, first %.700q; want exit 1 and one cut line", r.code, len(lines), lines[0])
	}
}

// TestReckonAllOrNothing: a job with a step ending in year 9999 exports
// nothing and names the step (on 85caa10: 6 of 9 spans, exit 1); rows of
// another job are refused; impossible records are named.
func TestReckonAllOrNothing(t *testing.T) {
	t.Parallel()
	completedJob := string(recordedSacct(t, "completed.sacct"))
	for _, tc := range []struct {
		name, out, want string
	}{
		{"year 9999", strings.Replace(completedJob, "2026-12-01T21:10:35|1|lensprobe|node1\n", "9999-12-31T23:59:59|1|lensprobe|node1\n", 1), "1.batch (COMPLETED): End 9999-12-31T23:59:59 is out of range"},
		{"another job", completedJob + strings.ReplaceAll(completedJob, "1|1|", "2|2|"), "2 is not job 1"},
		{"eligible before submit", strings.Replace(completedJob, "2026-12-01T21:10:32|2026-12-01T21:10:32|2026-12-01T21:10:32|2026-12-01T21:10:35|1|lensprobe|node[1-2]", "2026-12-01T21:10:32|2026-12-01T21:10:26|2026-12-01T21:10:32|2026-12-01T21:10:35|1|lensprobe|node[1-2]", 1), "line 1: 1 (COMPLETED): Eligible 2026-12-01T21:10:26 is before Submit"},
		{"start before eligible", strings.Replace(completedJob, "2026-12-01T21:10:32|2026-12-01T21:10:32|2026-12-01T21:10:32|2026-12-01T21:10:35|1|lensprobe|node[1-2]", "2026-12-01T21:10:32|2026-12-01T21:10:38|2026-12-01T21:10:32|2026-12-01T21:10:35|1|lensprobe|node[1-2]", 1), "Start 2026-12-01T21:10:32 is before Eligible"},
	} {
		if tc.out == completedJob {
			t.Fatalf("%s: the recorded output did not change", tc.name)
		}
		sacct, _ := fakeSacct(t, []byte(tc.out))
		r := runReckon(t, environ.Map{"OTEL_TRACES_EXPORTER": "console"}, sacct, "1")
		if n := len(consoleSpans(t, r.stderr)); r.code != 1 || n != 0 || !strings.Contains(r.stderr, tc.want) || strings.Contains(r.stdout, "queued -") {
			t.Errorf("%s: exit %d, %d spans, %v; want exit 1, no span, %q", tc.name, r.code, n, r, tc.want)
		}
	}
}

// TestReckonQueuedIsStartMinusEligible: the summary's queue wait is Start −
// Eligible, not Start − Submit (break: queueWait subtracts Submit).
func TestReckonQueuedIsStartMinusEligible(t *testing.T) {
	t.Parallel()
	out := "3|3|a|COMPLETED|0:0|2026-12-01T10:00:00|2026-12-01T10:00:05|2026-12-01T10:00:12|2026-12-01T10:00:20|7|c1|n1\n"
	sacct, _ := fakeSacct(t, []byte(out))
	r := runReckon(t, environ.Map{"OTEL_TRACES_EXPORTER": "console"}, sacct, "3")
	if r.code != 0 || !strings.Contains(r.stdout, " queued 7s ") {
		t.Errorf("%+v, want exit 0 and queued 7s", r)
	}
}

// TestFlushTimeoutMustBePositive: --flush-timeout 0 (and below) is a usage
// error of both batch commands, 1ns is not (break: `*flush <= 0` → `<`).
func TestFlushTimeoutMustBePositive(t *testing.T) {
	t.Parallel()
	for _, d := range []string{"0", "-1ns", "1ns"} {
		want := 2
		if d == "1ns" {
			// Accepted: not a usage error. Whether the export ends within
			// an idle nanosecond is the scheduler's business (exit 0 or
			// 1), not this test's.
			want = 1
		}
		r := runIn(t, environ.Map{"OTEL_TRACES_EXPORTER": "console"}, "", "emit-spans", "--flush-timeout", d, "--span", "a,1,2")
		if (r.code == 2) != (want == 2) || r.code > 2 {
			t.Errorf("emit-spans --flush-timeout %s: exit %d, want %s\n%v", d, r.code, map[bool]string{true: "2 (a usage error)", false: "0 or 1 (accepted)"}[want == 2], r)
		}
		sacct, _ := fakeSacct(t, recordedSacct(t, "completed.sacct"))
		if rr := runReckon(t, environ.Map{"OTEL_TRACES_EXPORTER": "console"}, sacct, "--flush-timeout", d, "1"); (rr.code == 2) != (want == 2) {
			t.Errorf("reckon --flush-timeout %s: exit %d\n%+v", d, rr.code, rr)
		}
		if rr := runReckon(t, environ.Map{"OTEL_TRACES_EXPORTER": "console"}, sacct, "--sacct-timeout", d, "1"); (rr.code == 2) != (want == 2) {
			t.Errorf("reckon --sacct-timeout %s: exit %d\n%+v", d, rr.code, rr)
		}
	}
}

// gate is a span exporter that holds its first export until released.
type gate struct {
	started, release chan struct{}
	once             sync.Once
	n                atomic.Int64
}

func (g *gate) ExportSpans(_ context.Context, s []sdktrace.ReadOnlySpan) error {
	g.once.Do(func() {
		close(g.started)
		<-g.release
	})
	g.n.Add(int64(len(s)))
	return nil
}

func (g *gate) Shutdown(context.Context) error { return nil }

// TestVerdictCountsDrops: a span dropped (the batch mode's context ended
// while the queue was full) fails the command although the flush
// succeeded (break: `if err == nil && c.Exported == want` → `if err ==
// nil` in exportVerdict).
func TestVerdictCountsDrops(t *testing.T) {
	t.Parallel()
	g := &gate{started: make(chan struct{}), release: make(chan struct{})}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	s := &telemetry.Settings{BSPMaxQueueSize: 1, BSPMaxExportBatch: 1, BSPScheduleDelay: time.Hour, BSPExportTimeout: time.Hour}
	tr, err := telemetry.NewTracing(context.Background(), resource.Empty(), s, telemetry.TracingOptions{Exporter: g, Batch: done})
	if err != nil {
		t.Fatal(err)
	}
	tracer := tr.Provider().Tracer("t")
	end := func() {
		_, sp := tracer.Start(context.Background(), "s")
		sp.End()
	}
	end() // the worker takes it and waits in the exporter
	<-g.started
	end() // queued
	end() // queue full, batch context done: dropped
	close(g.release)
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	verdict := exportVerdict(tr, 3, nil, time.Second, func(string) {})
	if c := tr.Counts(); c.Dropped != 1 || c.Exported != 2 || verdict == nil || !strings.Contains(verdict.Error(), "2 of 3 spans exported (0 failed, 1 dropped, 0 rejected)") {
		t.Errorf("counts %+v, verdict %v; want 2 exported, 1 dropped, an error", c, verdict)
	}
}

// TestEmitSpansEndpointCredentials: an endpoint with credentials in its URL,
// in front of a real collector (OTLP/HTTP and gRPC), is refused in one line
// naming the variable and OTEL_EXPORTER_OTLP_HEADERS; nothing reaches the
// collector and the password is not shown (on 85caa10 the spans were sent
// without the credentials, and the backend answered 401).
func TestEmitSpansEndpointCredentials(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{"grpc", "http/protobuf"} {
		col := collectortest.New(t, protocol, collectortest.OK)
		for _, endpoint := range []string{
			strings.Replace(col.Endpoint, "http://", "http://user:PWCANARY@", 1),
			col.Endpoint + "/?api_key=PWCANARY",
		} {
			env := environ.Map{"OTEL_EXPORTER_OTLP_PROTOCOL": protocol, "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}
			r := runIn(t, env, "", "emit-spans", "--span", "a,1,2")
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if r.code != 1 || len(lines) != 1 || !strings.Contains(r.stderr, "OTEL_EXPORTER_OTLP_ENDPOINT=") ||
				!strings.Contains(r.stderr, "OTEL_EXPORTER_OTLP_HEADERS") || strings.Contains(r.stderr, "PWCANARY") {
				t.Errorf("%s %s: %v; want exit 1, one line naming the variable and OTEL_EXPORTER_OTLP_HEADERS, no password", protocol, endpoint, r)
			}
		}
		if n := col.Requests(collectortest.Traces); n != 0 {
			t.Errorf("%s: %d exports reached the collector, want 0", protocol, n)
		}
	}
}

// TestEmitSpansRefusedAtOnce: in the batch mode a gRPC collector that
// refuses the connection fails each export at once with the refusal, not
// after retries until --flush-timeout with "context deadline exceeded"
// (break: drop guard.Final() from NewTracing's batch mode).
func TestEmitSpansRefusedAtOnce(t *testing.T) {
	t.Parallel()
	env := environ.Map{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT": collectortest.Refused(t),
		"OTEL_EXPORTER_OTLP_TIMEOUT": "600000"}
	r := runIn(t, env, "", append([]string{"emit-spans", "--flush-timeout", "20s"}, bigSet(3000, false)...)...)
	if r.code != 1 || !strings.Contains(r.stderr, "0 of 3000 spans exported (3000 failed, 0 dropped, 0 rejected): the collector refused the connection") ||
		strings.Contains(r.stderr, "timeout") {
		t.Errorf("%v; want exit 1, every span failed, the refusal as the reason", r)
	}
}
