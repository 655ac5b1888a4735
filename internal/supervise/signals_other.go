//go:build !linux

package supervise

import (
	"os"
	"syscall"
)

func subscribed() []os.Signal { return []os.Signal{os.Interrupt, syscall.SIGTERM} }

var ignoreWhileRunning []os.Signal

var sigNames = map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}

func inheritedIgnored() uint64 { return 0 }
