package detect_test

import (
	"crypto/sha1"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
)

// TestPreviousRunUUID: the previous attempt's UUID is the RunUUID of the
// environment that attempt had (docs/tracing.md#attempt-links). The
// expected UUIDs are those of docs/detection.md#uuid-worked-examples, or
// RunUUID of the previous environment written out by hand.
func TestPreviousRunUUID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		env   environ.Map
		runID string
		prev  environ.Map // the previous attempt's environment; nil: none
	}{
		{"requeued once", environ.Map{"SLURM_CLUSTER_NAME": "cluster-a", "SLURM_JOB_ID": "12345", "SLURM_RESTART_COUNT": "1"}, "",
			environ.Map{"SLURM_CLUSTER_NAME": "cluster-a", "SLURM_JOB_ID": "12345", "SLURM_RESTART_COUNT": "0"}},
		{"first attempt", environ.Map{"SLURM_CLUSTER_NAME": "cluster-a", "SLURM_JOB_ID": "12345"}, "", nil},
		{"restart count 0", environ.Map{"SLURM_JOB_ID": "7", "SLURM_RESTART_COUNT": "0"}, "", nil},
		{"torchelastic restart", environ.Map{"SLURM_JOB_ID": "7", "SLURM_RESTART_COUNT": "2", "TORCHELASTIC_RESTART_COUNT": "3"}, "",
			environ.Map{"SLURM_JOB_ID": "7", "SLURM_RESTART_COUNT": "2", "TORCHELASTIC_RESTART_COUNT": "2"}},
		{"first torchelastic run of a requeue: the batch level before", environ.Map{"SLURM_JOB_ID": "7", "SLURM_RESTART_COUNT": "2", "TORCHELASTIC_RESTART_COUNT": "0"}, "",
			environ.Map{"SLURM_JOB_ID": "7", "SLURM_RESTART_COUNT": "1"}},
		{"empty torchelastic count under Slurm", environ.Map{"SLURM_JOB_ID": "7", "SLURM_RESTART_COUNT": "1", "TORCHELASTIC_RESTART_COUNT": ""}, "",
			environ.Map{"SLURM_JOB_ID": "7", "SLURM_RESTART_COUNT": "0"}},
		{"array task", environ.Map{"SLURM_JOB_ID": "8", "SLURM_ARRAY_JOB_ID": "7", "SLURM_ARRAY_TASK_ID": "1", "SLURM_RESTART_COUNT": "1"}, "", nil},
		{"not a plain count", environ.Map{"SLURM_JOB_ID": "7", "SLURM_RESTART_COUNT": "01"}, "", nil},
		{"blank count", environ.Map{"SLURM_JOB_ID": "7", "SLURM_RESTART_COUNT": " 1"}, "", nil},
		{"local torchrun restart", environ.Map{"TORCHELASTIC_RUN_ID": "r", "TORCHELASTIC_RESTART_COUNT": "1"}, "",
			environ.Map{"TORCHELASTIC_RUN_ID": "r", "TORCHELASTIC_RESTART_COUNT": "0"}},
		{"local run id", environ.Map{"TORCHELASTIC_RESTART_COUNT": "5"}, "myrun",
			environ.Map{"TORCHELASTIC_RESTART_COUNT": "4"}},
		{"local, first", environ.Map{"TORCHELASTIC_RUN_ID": "r"}, "", nil},
		{"no identity", environ.Map{"TORCHELASTIC_RESTART_COUNT": "3"}, "", nil},
	} {
		got, ok := detect.PreviousRunUUID(tc.env, tc.runID)
		if tc.prev == nil {
			if ok {
				t.Errorf("%s: previous %s, want none", tc.name, got)
			}
			continue
		}
		want, _ := detect.RunUUID(tc.prev, tc.runID)
		if !ok || got != want {
			t.Errorf("%s: previous %q %v, want %q", tc.name, got, ok, want)
		}
	}
	// The worked example of docs/tracing.md#trace-per-attempt.
	got, _ := detect.PreviousRunUUID(environ.Map{"SLURM_CLUSTER_NAME": "cluster-a", "SLURM_JOB_ID": "12345", "SLURM_RESTART_COUNT": "1"}, "")
	if got != "1a280c0a-71d2-54bd-bd00-fa82efd94290" {
		t.Errorf("worked example: previous %s", got)
	}
}

// attemptTests are the rows of TestAttemptName (docs/tracing.md#attempt-restarts);
// they also seed FuzzAttemptName. prev is the previous attempt's name, ""
// for none.
var attemptTests = []struct {
	name  string
	env   environ.Map
	runID string
	want  string // "" for no identity
	prev  string
}{
	{"slurm, no torchrun", environ.Map{"SLURM_CLUSTER_NAME": "c", "SLURM_JOB_ID": "12345", "SLURM_RESTART_COUNT": "1"}, "",
		"nemo.lens.run/c/12345/sr1", "nemo.lens.run/c/12345/sr0"},
	{"static rendezvous keeps te", environ.Map{"TORCHELASTIC_RUN_ID": "J", "TORCHELASTIC_RESTART_COUNT": "2", "TORCHELASTIC_USE_AGENT_STORE": "True", "MASTER_ADDR": "h", "MASTER_PORT": "29500"}, "",
		"nemo.lens.run/local/J/te2", "nemo.lens.run/local/J/te1"},
	// Measured with torch 1.13's torchrun, two agents, c10d: the node whose
	// worker failed counts te0, te1, te2; the other te0, te0, te0; both
	// get the round's MASTER_PORT.
	{"c10d round, failing node", environ.Map{"TORCHELASTIC_RUN_ID": "J", "TORCHELASTIC_RESTART_COUNT": "1", "TORCHELASTIC_USE_AGENT_STORE": "False", "MASTER_ADDR": "localhost", "MASTER_PORT": "56273"}, "",
		"nemo.lens.run/local/J/rdzvlocalhost:56273", ""},
	{"c10d round, other node", environ.Map{"TORCHELASTIC_RUN_ID": "J", "TORCHELASTIC_RESTART_COUNT": "0", "TORCHELASTIC_USE_AGENT_STORE": "False", "MASTER_ADDR": "localhost", "MASTER_PORT": "56273"}, "",
		"nemo.lens.run/local/J/rdzvlocalhost:56273", ""},
	{"c10d round in a requeued Slurm job: linked to the previous requeue", environ.Map{"SLURM_JOB_ID": "7", "SLURM_RESTART_COUNT": "2", "TORCHELASTIC_RUN_ID": "J", "TORCHELASTIC_RESTART_COUNT": "3", "TORCHELASTIC_USE_AGENT_STORE": "False", "MASTER_ADDR": "n1", "MASTER_PORT": "1234"}, "",
		"nemo.lens.run/nocluster/7/sr2/rdzvn1:1234", "nemo.lens.run/nocluster/7/sr1"},
	{"a port without a rendezvous agent store flag is not a round", environ.Map{"TORCHELASTIC_RUN_ID": "J", "TORCHELASTIC_RESTART_COUNT": "1", "MASTER_PORT": "1234"}, "",
		"nemo.lens.run/local/J/te1", "nemo.lens.run/local/J/te0"},
	{"an empty port is not a round", environ.Map{"TORCHELASTIC_RUN_ID": "J", "TORCHELASTIC_RESTART_COUNT": "1", "TORCHELASTIC_USE_AGENT_STORE": "False", "MASTER_PORT": ""}, "",
		"nemo.lens.run/local/J/te1", "nemo.lens.run/local/J/te0"},
	{"Slurm without torchrun: no te part, no round", environ.Map{"SLURM_JOB_ID": "7", "TORCHELASTIC_USE_AGENT_STORE": "False", "MASTER_PORT": "1234"}, "",
		"nemo.lens.run/nocluster/7/sr0", ""},
	{"NVRx cycle beats the round", environ.Map{"TORCHELASTIC_RUN_ID": "J", "TORCHELASTIC_RESTART_COUNT": "1", "TORCHELASTIC_USE_AGENT_STORE": "False", "MASTER_PORT": "1234", "NVRX_CYCLE": "3"}, "",
		"nemo.lens.run/local/J/nvrx3", "nemo.lens.run/local/J/nvrx2"},
	{"NVRx first cycle under Slurm: the previous requeue", environ.Map{"SLURM_JOB_ID": "7", "SLURM_RESTART_COUNT": "1", "NVRX_CYCLE": "0"}, "",
		"nemo.lens.run/nocluster/7/sr1/nvrx0", "nemo.lens.run/nocluster/7/sr0"},
	{"NVRx first cycle, local", environ.Map{"NVRX_CYCLE": "0"}, "r", "nemo.lens.run/local/r/nvrx0", ""},
	{"an NVRx cycle that is not plain is ignored", environ.Map{"TORCHELASTIC_RUN_ID": "J", "TORCHELASTIC_RESTART_COUNT": "1", "NVRX_CYCLE": "01"}, "",
		"nemo.lens.run/local/J/te1", "nemo.lens.run/local/J/te0"},
	{"no identity", environ.Map{"NVRX_CYCLE": "2", "MASTER_PORT": "1", "TORCHELASTIC_USE_AGENT_STORE": "False"}, "", "", ""},
}

// uuid5URL is Python's uuid.uuid5(uuid.NAMESPACE_URL, name), written again.
func uuid5URL(name string) string {
	ns := []byte{0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}
	sum := sha1.Sum(append(ns, name...))
	sum[6] = sum[6]&0x0f | 0x50
	sum[8] = sum[8]&0x3f | 0x80
	h := hex.EncodeToString(sum[:16])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// TestAttemptName pins docs/tracing.md#attempt-restarts: the attempt's name
// and UUID, the previous attempt's UUID, and nv.dl.run.uuid left as it is.
func TestAttemptName(t *testing.T) {
	t.Parallel()
	for _, tc := range attemptTests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := detect.AttemptName(tc.env, tc.runID)
			if got != tc.want || ok != (tc.want != "") {
				t.Fatalf("AttemptName = %q, %v; want %q", got, ok, tc.want)
			}
			u, ok := detect.AttemptUUID(tc.env, tc.runID)
			if tc.want != "" && (!ok || u != uuid5URL(tc.want)) {
				t.Errorf("AttemptUUID = %q, %v; want %q", u, ok, uuid5URL(tc.want))
			}
			prev, ok := detect.PreviousAttemptUUID(tc.env, tc.runID)
			switch {
			case tc.prev == "" && ok:
				t.Errorf("PreviousAttemptUUID = %q, want none", prev)
			case tc.prev != "" && (!ok || prev != uuid5URL(tc.prev)):
				t.Errorf("PreviousAttemptUUID = %q, %v; want %q (of %q)", prev, ok, uuid5URL(tc.prev), tc.prev)
			}
			// nv.dl.run.uuid keeps the reference's bytes: te, not the round.
			if name, ok := detect.RunUUIDName(tc.env, tc.runID); ok && strings.Contains(name, "/rdzv") || strings.Contains(name, "/nvrx") {
				t.Errorf("RunUUIDName = %q: the round or cycle leaked into nv.dl.run.uuid", name)
			}
		})
	}
}

// FuzzAttemptName checks, for any environment seeded with TestAttemptName's
// rows: an attempt name exactly when there is a run uuid name, equal to it
// but for its last part; the previous attempt's UUID never the attempt's
// own.
func FuzzAttemptName(f *testing.F) {
	keys := []string{"SLURM_JOB_ID", "SLURM_RESTART_COUNT", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT",
		"TORCHELASTIC_USE_AGENT_STORE", "MASTER_ADDR", "MASTER_PORT", "NVRX_CYCLE"}
	for _, tc := range attemptTests {
		var vals []string
		for _, k := range keys {
			v, ok := tc.env[k]
			if !ok {
				v = "\x00" // absent
			}
			vals = append(vals, v)
		}
		f.Add(tc.runID, strings.Join(vals, "\x01"))
	}
	f.Fuzz(func(t *testing.T, runID, joined string) {
		env := environ.Map{}
		for i, v := range strings.SplitN(joined, "\x01", len(keys)) {
			if v != "\x00" {
				env[keys[i]] = v
			}
		}
		run, okRun := detect.RunUUIDName(env, runID)
		name, ok := detect.AttemptName(env, runID)
		if ok != okRun {
			t.Fatalf("AttemptName ok %v, RunUUIDName ok %v", ok, okRun)
		}
		if !ok {
			return
		}
		if !replacesLastPart(run, name) {
			t.Fatalf("AttemptName %q is not RunUUIDName %q with its last part replaced", name, run)
		}
		u, _ := detect.AttemptUUID(env, runID)
		if p, ok := detect.PreviousAttemptUUID(env, runID); ok && p == u {
			t.Fatalf("previous attempt %s is the attempt itself (%q)", p, name)
		}
	})
}

// replacesLastPart reports whether name is run, or run with a "/nvrx" part
// added, or run with a "/te" part replaced by a "/nvrx" or "/rdzv" one.
func replacesLastPart(run, name string) bool {
	if name == run || strings.HasPrefix(name, run+"/nvrx") {
		return true
	}
	for i := range len(run) {
		if strings.HasPrefix(run[i:], "/te") && strings.HasPrefix(name, run[:i]) &&
			(strings.HasPrefix(name[i:], "/nvrx") || strings.HasPrefix(name[i:], "/rdzv")) {
			return true
		}
	}
	return false
}

// TestRoundsKey pins docs/tracing.md#round-links: a key exactly for a
// worker of a dynamic-rendezvous round outside NVRx, the run's name without
// its te part, and the agent's log directory when TORCHELASTIC_ERROR_FILE
// has one.
func TestRoundsKey(t *testing.T) {
	t.Parallel()
	round := func(extra ...string) environ.Map {
		m := environ.Map{"TORCHELASTIC_RUN_ID": "job1", "TORCHELASTIC_RESTART_COUNT": "1",
			"TORCHELASTIC_USE_AGENT_STORE": "False", "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29400"}
		for i := 0; i < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name  string
		env   environ.Map
		runID string
		want  string // "": none
	}{
		{"local round", round(), "", "nemo.lens.run/local/job1"},
		{"configured run id", round(), "cfg", "nemo.lens.run/local/cfg"},
		{"agent log dir", round("TORCHELASTIC_ERROR_FILE", "/tmp/torchelastic_x/job1_y/attempt_1/0/error.json"), "",
			"nemo.lens.run/local/job1\x00/tmp/torchelastic_x/job1_y"},
		{"last attempt_ part", round("TORCHELASTIC_ERROR_FILE", "/d/attempt_0/x/attempt_2/1/error.json"), "",
			"nemo.lens.run/local/job1\x00/d/attempt_0/x"},
		{"error file without attempt", round("TORCHELASTIC_ERROR_FILE", "/tmp/error.json"), "", "nemo.lens.run/local/job1"},
		{"slurm round", round("SLURM_JOB_ID", "7", "SLURM_CLUSTER_NAME", "c", "SLURM_RESTART_COUNT", "2"), "",
			"nemo.lens.run/c/7/sr2"},
		{"static rendezvous", round("TORCHELASTIC_USE_AGENT_STORE", "True"), "", ""},
		{"no master port", round("MASTER_PORT", ""), "", ""},
		{"nvrx", round("NVRX_CYCLE", "1"), "", ""},
		{"slurm without te", environ.Map{"SLURM_JOB_ID": "7", "TORCHELASTIC_USE_AGENT_STORE": "False", "MASTER_PORT": "1"}, "", ""},
		{"no identity", environ.Map{"TORCHELASTIC_USE_AGENT_STORE": "False", "MASTER_PORT": "1"}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := detect.RoundsKey(tc.env, tc.runID)
			if got != tc.want || ok != (tc.want != "") {
				t.Errorf("RoundsKey = %q, %v; want %q", got, ok, tc.want)
			}
		})
	}
}
