//go:build unix

package main

import (
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// sacctProcessGroup makes cmd the leader of a new process group whose
// cancellation kills the whole group (docs/reckoner.md#bounds).
func sacctProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
}

// killGroup sends SIGKILL to the process group cmd leads.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if err == syscall.ESRCH {
		return os.ErrProcessDone
	}
	return err
}

// reckonSignals are the signals that end lens reckon after it has killed
// sacct's process group.
var reckonSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// notifyReckon relays reckonSignals to c.
func notifyReckon(c chan<- os.Signal) { signal.Notify(c, reckonSignals...) }
