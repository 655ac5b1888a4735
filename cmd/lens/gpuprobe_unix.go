//go:build unix

package main

import (
	"os"
	"os/signal"
	"syscall"
)

// dropSentFaults keeps the GPU probe alive through the synchronous signals
// another process sends it (a step-wide `scancel --signal=SEGV` reaches
// every process of the step): subscribed, they are handed to a channel
// nobody reads instead of crashing the Go runtime with a stack dump; a
// fault of the probe's own code still crashes it (docs/exec.md#signal-fates).
func dropSentFaults() {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGFPE,
		syscall.SIGILL, syscall.SIGTRAP, syscall.SIGSYS)
}
