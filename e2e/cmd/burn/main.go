//go:build linux

// Command burn is the rank of the dashboard end-to-end test
// (e2e/dashboard_test.go): it holds some memory, spends some CPU time,
// says what it used as the kernel counts it, then exits or waits.
//
//	burn -cpu MS -mib N [-hold] [-exit CODE]
//
// It writes -mib MiB (every page), spins until getrusage(RUSAGE_SELF) says
// it has spent -cpu ms of CPU time, and prints one JSON line:
//
//	{"pid":123,"cpu_seconds":0.41,"rss_bytes":104857600}
//
// (its own CPU time, user + system, and VmRSS from /proc/self/status).
// Then it exits with -exit, or with -hold reads stdin until EOF first
// (the test kills it there, as a rank that dies).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

func main() {
	cpuMS := flag.Int("cpu", 100, "CPU time to spend, in ms")
	mib := flag.Int("mib", 16, "memory to hold, in MiB")
	hold := flag.Bool("hold", false, "after the report, read stdin until EOF")
	code := flag.Int("exit", 0, "exit status")
	flag.Parse()

	buf := make([]byte, *mib<<20)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1
	}
	x := uint64(1)
	var ru syscall.Rusage
	for {
		for range 1 << 16 {
			x = x*6364136223846793005 + 1442695040888963407
		}
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			fmt.Fprintln(os.Stderr, "burn:", err)
			os.Exit(1)
		}
		if ru.Utime.Nano()+ru.Stime.Nano() >= int64(*cpuMS)*1e6 {
			break
		}
	}
	report := struct {
		PID        int     `json:"pid"`
		CPUSeconds float64 `json:"cpu_seconds"`
		RSSBytes   int64   `json:"rss_bytes"`
		Sink       uint64  `json:"sink"`
	}{os.Getpid(), float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9, vmRSS(), x + uint64(buf[len(buf)-4096])}
	b, _ := json.Marshal(report)
	fmt.Println(string(b))
	if *hold {
		_, _ = io.Copy(io.Discard, os.Stdin)
	}
	runtime.KeepAlive(buf) // held, as reported, until the exit
	os.Exit(*code)
}

// vmRSS is VmRSS of /proc/self/status in bytes, or -1.
func vmRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return -1
			}
			return kb * 1024
		}
	}
	return -1
}
