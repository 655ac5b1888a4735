package e2e_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nemolens/lens-go/e2e/internal/launch"
)

// TestTorchrunSignals (issue 25): the real torchrun agent (torch 1.13, one
// agent, two workers in the agent's own process group, as torch 1.13 starts
// them) stopped by the senders that stop a job, bare and in the two lens
// layouts (lens exec around the agent; lens exec as each worker's
// command), which must give what bare gives: each worker's signal counts,
// the workers' statuses and the top process's status.
//
//   - ctrl-c: ^C typed on the pseudo-terminal whose foreground job the
//     top process is (the terminal sends SIGINT to the whole group; the
//     agent then sends SIGINT to each worker's pid): each worker stops at
//     its first SIGINT. Whether it counts one or two is a race (two SIGINTs
//     close together merge while pending, in the kernel or in Python's
//     handler), so what is compared is that each got SIGINT;
//   - sigterm: SIGTERM to the top process (the agent, or the lens exec
//     around it), which the agent passes to each worker's pid.
//
// A job that a lost signal leaves running is stopped after a minute and
// reported with what its workers got.
func TestTorchrunSignals(t *testing.T) {
	elapsed(t)
	needTorch(t)
	lensBin, py := lensBinary(t), pyWorker(t)

	type outcome struct {
		status  int
		signals map[string]string // by worker rank: its counts
		exits   map[string]int
		ended   bool // the top process ended by itself
	}
	run := func(t *testing.T, layout, sender string) outcome {
		ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
		defer cancel()
		port, err := launch.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		out := outDir(t)
		job := &torchrunJob{layout: layout, agents: 1, workers: 2, rdzv: uniqueName("rdzv"), lens: lensBin, py: py, out: out,
			pyArgs: []string{"--wait"}}
		argv := job.argv(fmt.Sprintf("127.0.0.1:%d", port))
		env := lensEnv(os.Environ())
		var s *started
		var master *os.File
		if sender == "ctrl-c" {
			m, slave, err := launch.OpenPTY()
			if err != nil {
				cannotRun(t, "no pseudo-terminal: %v", err)
			}
			defer m.Close()
			defer slave.Close()
			master = m
			s = startOn(t, env, slave, argv...)
		} else {
			s = start(t, env, true, argv[0], argv[1:]...)
		}
		if err := launch.WaitReady(ctx, out, "w", 2); err != nil {
			t.Fatalf("%v\n%s", err, s.out.String())
		}
		if sender == "ctrl-c" {
			if _, err := master.Write([]byte{3}); err != nil {
				t.Fatal(err)
			}
		} else if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		o := outcome{ended: true}
		// A lost signal leaves the job running: a bound, not a margin.
		bound, stop := context.WithTimeout(ctx, 60*time.Second)
		defer stop()
		select {
		case <-s.done:
		case <-bound.Done():
			o.ended = false
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		}
		o.status = s.wait(ctx, t)
		recs := pyRecords(t, out, "w", 2)
		o.signals, o.exits = map[string]string{}, map[string]int{}
		for _, r := range recs {
			keys := slices.Sorted(maps.Keys(r.Signals))
			var c []string
			for _, k := range keys {
				n := r.Signals[k]
				if sender == "ctrl-c" && k == "SIGINT" && n > 1 {
					n = 1 // got it; one or two is the race above
				}
				c = append(c, fmt.Sprintf("%s=%d", k, n))
			}
			o.signals[r.Env["RANK"]] = strings.Join(c, " ")
			o.exits[r.Env["RANK"]] = exitOf(r)
		}
		t.Logf("%s %s: %+v", layout, sender, o)
		return o
	}

	for _, sender := range []string{"ctrl-c", "sigterm"} {
		t.Run(sender, func(t *testing.T) {
			results := map[string]outcome{}
			var mu sync.Mutex
			t.Run("layouts", func(t *testing.T) {
				for _, layout := range torchrunLayouts {
					t.Run(layout, func(t *testing.T) {
						t.Parallel()
						o := run(t, layout, sender)
						mu.Lock()
						results[layout] = o
						mu.Unlock()
					})
				}
			})
			bare, ok := results["bare"]
			if !ok {
				return // failed (said above), or not selected by -run
			}
			if !bare.ended {
				t.Errorf("bare: the agent did not end")
			}
			for _, layout := range torchrunLayouts[1:] {
				got, ok := results[layout]
				if !ok {
					continue
				}
				if got.ended != bare.ended || got.status != bare.status || !maps.Equal(got.signals, bare.signals) || !maps.Equal(got.exits, bare.exits) {
					t.Errorf("%s, %s:\n  bare: %+v\n  lens: %+v", sender, layout, bare, got)
				}
			}
		})
	}
}

// startOn starts argv as the foreground job of a terminal: the leader of a
// new session whose controlling terminal is tty (its stdin); stdout and
// stderr are kept.
func startOn(t *testing.T, env []string, tty *os.File, argv ...string) *started {
	t.Helper()
	s := &started{cmd: exec.Command(argv[0], argv[1:]...), out: new(syncBuffer), done: make(chan struct{})}
	s.cmd.Env = env
	s.cmd.Stdin = tty
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("%s: %v", argv[0], err)
	}
	go func() { s.err = s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-s.done
		}
	})
	return s
}
