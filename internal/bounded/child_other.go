//go:build !linux

package bounded

import (
	"os"
	"os/exec"
)

// endGroup ends the caller alone.
func endGroup() { os.Exit(1) }

// ownGroup leaves cmd as it is: outside Linux there is no group to kill.
func ownGroup(*exec.Cmd) {}

// killGroup kills the child alone.
func killGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }
