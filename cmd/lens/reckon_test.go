package main

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nemolens/lens-go/environ"
)

// recordedSacct reads output recorded from the e2e cluster's sacct (Slurm
// 22.05.8 with slurmdbd + MariaDB).
func recordedSacct(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "internal", "reckon", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fakeSacct answers --helpformat with the recorded 22.05 list and the
// record query with outputs[i] on the i-th call (the last one after that).
func fakeSacct(t *testing.T, outputs ...[]byte) (func(context.Context, ...string) ([]byte, error), *atomic.Int32) {
	help := recordedSacct(t, "helpformat-22.05.txt")
	var n atomic.Int32
	return func(_ context.Context, args ...string) ([]byte, error) {
		if len(args) == 1 && args[0] == "--helpformat" {
			return help, nil
		}
		i := int(n.Add(1)) - 1
		return outputs[min(i, len(outputs)-1)], nil
	}, &n
}

type reckonResult struct {
	stdout, stderr string
	code           int
}

func runReckon(t *testing.T, env environ.Map, sacct func(context.Context, ...string) ([]byte, error), args ...string) reckonResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	a := &app{stdout: &stdout, stderr: &stderr, env: env, sacct: sacct, reckonPoll: time.Millisecond}
	code := a.main(context.Background(), append([]string{"reckon"}, args...))
	return reckonResult{stdout.String(), stderr.String(), code}
}

// runUUID is nv.dl.run.uuid computed here, independently of detect: the
// UUIDv5 (SHA-1, URL namespace) of the name (docs/detection.md#run-uuid).
func runUUID(name string) string {
	ns, _ := hex.DecodeString("6ba7b8119dad11d180b400c04fd430c8")
	h := sha1.Sum(append(ns, name...))
	h[6] = h[6]&0x0f | 0x50
	h[8] = h[8]&0x3f | 0x80
	x := hex.EncodeToString(h[:16])
	return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}

func anchorOf(uuid string) string {
	s := sha256.Sum256([]byte("nemo.lens.attempt.anchor/" + uuid))
	return hex.EncodeToString(s[:8])
}

// TestReckonRequeued: the recorded requeued job (two records) becomes two
// traces, each with the trace id of its attempt's nv.dl.run.uuid, the
// allocation span as the anchor, and attempt 1 linked to attempt 0.
func TestReckonRequeued(t *testing.T) {
	t.Parallel()
	sacct, _ := fakeSacct(t, recordedSacct(t, "requeued.sacct"))
	r := runReckon(t, environ.Map{"OTEL_TRACES_EXPORTER": "console", "TRACEPARENT": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}, sacct, "2")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	u0, u1 := runUUID("nemo.lens.run/lensprobe/2/sr0"), runUUID("nemo.lens.run/lensprobe/2/sr1")
	t0, t1 := strings.ReplaceAll(u0, "-", ""), strings.ReplaceAll(u1, "-", "")
	spans := consoleSpans(t, r.stderr)
	if len(spans) != 17 {
		t.Fatalf("%d spans, want 8 + 9", len(spans))
	}
	byTrace := map[string]int{}
	for _, s := range spans {
		byTrace[s.SpanContext.TraceID]++
		if s.Parent.SpanID != "" && s.Parent.SpanID != "0000000000000000" {
			t.Errorf("%s has parent %s; the reckoner's spans are flat (and TRACEPARENT is ignored)", s.Name, s.Parent.SpanID)
		}
		wantLink := s.SpanContext.TraceID == t1
		if got := len(s.Links) == 1 && s.Links[0].SpanContext.TraceID == t0 && s.Links[0].SpanContext.SpanID == anchorOf(u0); got != wantLink {
			t.Errorf("%s in trace %s: links %+v, want a link to attempt 0's anchor: %v", s.Name, s.SpanContext.TraceID, s.Links, wantLink)
		}
		if s.Name == "slurm.record.allocation" {
			want := anchorOf(u0)
			if s.SpanContext.TraceID == t1 {
				want = anchorOf(u1)
			}
			if s.SpanContext.SpanID != want {
				t.Errorf("allocation span id %s, want the anchor %s", s.SpanContext.SpanID, want)
			}
		}
		if s.Name == "slurm.phase.queued" && s.SpanContext.TraceID == t1 {
			if s.StartTime.Format(time.TimeOnly) != "21:10:44" || s.EndTime.Format(time.TimeOnly) != "21:10:45" || s.StartTime.Location() != time.UTC {
				t.Errorf("attempt 1 queued %v..%v, want 21:10:44..21:10:45 UTC", s.StartTime, s.EndTime)
			}
		}
	}
	if byTrace[t0] != 8 || byTrace[t1] != 9 {
		t.Errorf("spans per trace %v, want %s: 8 and %s: 9", byTrace, t0, t1)
	}
	for _, want := range []string{"job 2 attempt 0 trace " + t0, "job 2 attempt 1 trace " + t1} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout %q lacks %q", r.stdout, want)
		}
	}
}

// TestReckonNotFinal: a record that stays not final is asked for again
// every poll until --wait ends, then lens reckon prints the submit line
// and exports nothing. The clock advances 5 ms per sacct query (not with
// the wall clock, which a loaded machine stretches: with time.Now the
// first query alone could outlast --wait 20ms), so --wait 20ms at 1 ms
// polls is exactly 4 queries.
func TestReckonNotFinal(t *testing.T) {
	t.Parallel()
	for _, file := range []string{"running.sacct", "pending.sacct"} {
		sacct, calls := fakeSacct(t, recordedSacct(t, file))
		start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		clock := func() time.Time { return start.Add(time.Duration(calls.Load()) * 5 * time.Millisecond) }
		var stdout, stderr bytes.Buffer
		a := &app{stdout: &stdout, stderr: &stderr, env: environ.Map{"OTEL_TRACES_EXPORTER": "console"}, sacct: sacct, reckonPoll: time.Millisecond, clock: clock}
		code := a.main(context.Background(), []string{"reckon", "--wait", "20ms", "8"})
		if r := (reckonResult{stdout.String(), stderr.String(), code}); r.code != 0 || !strings.Contains(r.stdout, "sbatch --dependency=afterany:8 examples/reckon.sbatch 8") || r.stderr != "" {
			t.Errorf("%s: %+v, want exit 0, the submit line, no spans", file, r)
		}
		if calls.Load() != 4 {
			t.Errorf("%s: sacct asked %d times in --wait 20ms at 1ms intervals, 5ms a query; want 4", file, calls.Load())
		}
	}
}

// --wait asks again until the record is final.
func TestReckonWait(t *testing.T) {
	t.Parallel()
	// Job 8's running record, renumbered as job 1 (the rows of another
	// job are refused).
	running := bytes.ReplaceAll(recordedSacct(t, "running.sacct"), []byte("8"), []byte("1"))
	sacct, calls := fakeSacct(t, running, running, recordedSacct(t, "completed.sacct"))
	r := runReckon(t, environ.Map{"OTEL_TRACES_EXPORTER": "console"}, sacct, "--wait", "1h", "1")
	if r.code != 0 || len(consoleSpans(t, r.stderr)) != 9 || calls.Load() != 3 {
		t.Errorf("%+v after %d sacct calls, want 9 spans after 3", r, calls.Load())
	}
}

func TestReckonFailures(t *testing.T) {
	t.Parallel()
	console := environ.Map{"OTEL_TRACES_EXPORTER": "console"}
	good, _ := fakeSacct(t, recordedSacct(t, "completed.sacct"))
	bad, _ := fakeSacct(t, []byte("1|1|x\n"))
	failing := func(context.Context, ...string) ([]byte, error) {
		return nil, errors.New("exit status 1: sacct: error: Problem talking to the database")
	}
	for _, tc := range []struct {
		name  string
		env   environ.Map
		sacct func(context.Context, ...string) ([]byte, error)
		args  []string
		code  int
		want  string
	}{
		{"no job", console, good, nil, 2, "want exactly one JOBID"},
		{"bad job", console, good, []string{"1.batch"}, 2, `JOBID "1.batch"`},
		{"negative wait", console, good, []string{"--wait", "-1s", "1"}, 2, "--wait"},
		{"sacct fails", console, failing, []string{"1"}, 1, "Problem talking to the database"},
		{"malformed", console, bad, []string{"1"}, 1, "sacct output line 1: 3 fields"},
		{"exporter none", environ.Map{"OTEL_TRACES_EXPORTER": "none"}, good, []string{"1"}, 1, "exporter is none"},
		{"sdk off", environ.Map{"OTEL_SDK_DISABLED": "true"}, good, []string{"1"}, 1, "OTEL_SDK_DISABLED"},
		{"traces off", environ.Map{"NEMO_LENS_TRACES_ENABLED": "false"}, good, []string{"1"}, 1, "NEMO_LENS_TRACES_ENABLED"},
		{"bad config", environ.Map{"OTEL_TRACES_EXPORTER": "bogus"}, good, []string{"1"}, 1, "telemetry:"},
	} {
		r := runReckon(t, tc.env, tc.sacct, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: %+v, want exit %d and %q on stderr", tc.name, r, tc.code, tc.want)
		}
	}
}

// The resource and the traces are the reckoned job's, not those of the
// reckoner's own Slurm job, whose per-attempt mode it inherits.
func TestReckonResource(t *testing.T) {
	t.Parallel()
	sacct, _ := fakeSacct(t, recordedSacct(t, "completed.sacct"))
	env := environ.Map{"OTEL_TRACES_EXPORTER": "console", "SLURM_JOB_ID": "77", "SLURM_CLUSTER_NAME": "other",
		"OTEL_RESOURCE_ATTRIBUTES": "nemo.run.id=run-1,slurm.job.id=77", "NEMO_LENS_TRACE_PER_ATTEMPT": "true"}
	r := runReckon(t, env, sacct, "1")
	spans := consoleSpans(t, r.stderr)
	if r.code != 0 || len(spans) == 0 {
		t.Fatalf("%+v", r)
	}
	if want := strings.ReplaceAll(runUUID("nemo.lens.run/lensprobe/1/sr0"), "-", ""); spans[0].SpanContext.TraceID != want {
		t.Errorf("trace %s, want the reckoned job's %s", spans[0].SpanContext.TraceID, want)
	}
	got := map[string]any{}
	for _, kv := range spans[0].Resource {
		got[kv.Key] = kv.Value.Value
	}
	for k, v := range map[string]any{"slurm.job.id": "1", "slurm.cluster.name": "lensprobe", "nemo.run.id": "run-1", "service.name": "lens-reckon"} {
		if got[k] != v {
			t.Errorf("resource %s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
}
