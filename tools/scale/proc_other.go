//go:build !unix

package main

import (
	"os"
	"time"
)

func cpuTime() time.Duration { return 0 }

func childUsage(*os.ProcessState) (int64, time.Duration) { return 0, 0 }
