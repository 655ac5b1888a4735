package supervise

import (
	"syscall"
	"testing"

	"github.com/nemolens/lens-go/environ"
)

// resolveModeCases are the places lens runs in and the mode each calls for
// (docs/exec.md#signals).
var resolveModeCases = []struct {
	m    Mode
	at   Place
	want Mode
}{
	{ModeAuto, Place{}, ModeAside},                                               // a script's child, Popen, torch 1.13 workers
	{ModeAuto, Place{Leader: true}, ModeRelay},                                   // a shell's job, a terminal's session
	{ModeAuto, Place{PID1: true, Leader: true}, ModeRelay},                       // a container's entrypoint
	{ModeAuto, Place{PID1: true}, ModeRelay},                                     // unshare --fork's PID 1 shares unshare's group
	{ModeAuto, Place{PID1: true, Leader: true, SlurmJob: true}, ModeRelay},       // docker run from a batch script
	{ModeAuto, Place{Leader: true, SlurmJob: true}, ModeRelay},                   // exec lens exec as the batch script
	{ModeAuto, Place{SlurmJob: true}, ModeAside},                                 // lens exec … & in a batch script
	{ModeAuto, Place{Leader: true, SlurmJob: true, SlurmStep: true}, ModeDirect}, // srun's task 0
	{ModeAuto, Place{SlurmJob: true, SlurmStep: true}, ModeDirect},               // srun's other tasks, a launcher's child
	{ModeAuto, Place{PID1: true, SlurmJob: true, SlurmStep: true}, ModeDirect},
	{ModeRelay, Place{SlurmJob: true, SlurmStep: true}, ModeRelay},
	{ModeDirect, Place{}, ModeDirect},
	{ModeAside, Place{Leader: true}, ModeAside},
}

func TestResolveMode(t *testing.T) {
	t.Parallel()
	for _, tc := range resolveModeCases {
		if got := ResolveMode(tc.m, tc.at); got != tc.want {
			t.Errorf("ResolveMode(%v, %+v) = %v, want %v", tc.m, tc.at, got, tc.want)
		}
	}
}

func TestLocate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env       environ.Map
		job, step bool
	}{
		{nil, false, false},
		{environ.Map{"SLURM_JOB_ID": "7"}, true, false},
		{environ.Map{"SLURM_JOB_ID": ""}, false, false},
		{environ.Map{"SLURM_JOB_ID": "7", "SLURM_STEP_ID": "0"}, true, true},
		{environ.Map{"SLURM_JOB_ID": "7", "SLURM_STEP_ID": ""}, true, false},
		{environ.Map{"SLURM_STEP_ID": "0"}, false, false},
	} {
		if got := Locate(tc.env); got.SlurmJob != tc.job || got.SlurmStep != tc.step {
			t.Errorf("Locate(%v) = %+v, want SlurmJob %v, SlurmStep %v", tc.env, got, tc.job, tc.step)
		}
	}
}

func TestParseMode(t *testing.T) {
	t.Parallel()
	for _, m := range []Mode{ModeAuto, ModeRelay, ModeDirect, ModeAside} {
		if got, err := ParseMode(m.String()); got != m || err != nil {
			t.Errorf("ParseMode(%q) = %v, %v", m.String(), got, err)
		}
	}
	if _, err := ParseMode("forward"); err == nil {
		t.Error("ParseMode(forward): no error")
	}
}

func TestExitStatus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		e      Exit
		status int
		text   string
	}{
		{Exit{Code: 0}, 0, "exit status 0"},
		{Exit{Code: 3}, 3, "exit status 3"},
		{Exit{Code: -1, Signal: syscall.SIGTERM}, 143, "killed by signal terminated"},
	} {
		if tc.e.Status() != tc.status || tc.e.String() != tc.text {
			t.Errorf("%+v: %d %q, want %d %q", tc.e, tc.e.Status(), tc.e.String(), tc.status, tc.text)
		}
	}
}
