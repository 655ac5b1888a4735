//go:build !unix

package main

import "os"

// forwardedSignals are the signals lens exec passes on to the command.
var forwardedSignals = []os.Signal{os.Interrupt}

// waitStatus returns the command's exit code and a short description for
// the span status.
func waitStatus(ps *os.ProcessState) (status int, detail string) {
	return ps.ExitCode(), ps.String()
}
