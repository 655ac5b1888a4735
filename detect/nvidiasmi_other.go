//go:build !unix

package detect

import "os/exec"

// setProcessGroup leaves cmd as it is: without unix process groups, the
// cancellation of its context kills the tool only (os/exec's default).
func setProcessGroup(*exec.Cmd) {}

// killProcessGroup kills the tool only; its descendants, if any, are not
// reached.
func killProcessGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}
