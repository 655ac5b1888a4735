package supervise

import (
	"syscall"
	"testing"

	"github.com/nemolens/lens-go/environ"
)

func TestResolveMode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		m    Mode
		env  environ.Map
		want Mode
	}{
		{ModeAuto, nil, ModeRelay},
		{ModeAuto, environ.Map{"SLURM_JOB_ID": "7"}, ModeDirect},
		{ModeAuto, environ.Map{"SLURM_JOB_ID": ""}, ModeRelay},
		{ModeRelay, environ.Map{"SLURM_JOB_ID": "7"}, ModeRelay},
		{ModeDirect, nil, ModeDirect},
	} {
		if got := ResolveMode(tc.m, tc.env); got != tc.want {
			t.Errorf("ResolveMode(%v, %v) = %v, want %v", tc.m, tc.env, got, tc.want)
		}
	}
}

func TestParseMode(t *testing.T) {
	t.Parallel()
	for _, m := range []Mode{ModeAuto, ModeRelay, ModeDirect} {
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
