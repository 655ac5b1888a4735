// Package slurm drives a throwaway Slurm cluster on localhost for the
// end-to-end tests: it starts and stops it through scripts/slurm-up.sh and
// scripts/slurm-down.sh, builds clean submitter environments, and wraps
// srun, sbatch, salloc, squeue and scontrol with bounded waits. With
// Options.Accounting (StartWith) the cluster has real accounting — slurmdbd
// backed by a private MariaDB — so that sacct reads its jobs' records.
//
// Everything here must run as root (the scripts install packages and start
// daemons; jobs run as root).
package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Default bounds for commands that have no deadline of their own.
const (
	// StartTimeout bounds slurm-up.sh when ctx has no deadline (a cold start
	// installs packages).
	StartTimeout = 10 * time.Minute
	// StopTimeout bounds slurm-down.sh (cancel ≤ 15 s, then ≤ ~10 s per daemon kind).
	StopTimeout = 2 * time.Minute
	// CommandTimeout bounds a single client command when ctx has no deadline.
	CommandTimeout = 2 * time.Minute
	// PollInterval is the squeue polling interval.
	PollInterval = 200 * time.Millisecond
)

// Cluster is a running throwaway cluster. Its methods are safe for
// concurrent use, except Restart and Stop, which must not race with jobs.
type Cluster struct {
	// StateDir holds all state: etc/slurm.conf, munge/, log/, pids/, ...
	StateDir string
	// Conf is the SLURM_CONF every client command uses.
	Conf string
	// Name is the ClusterName as slurmctld reports it (scontrol show config).
	Name string

	scripts string

	opts Options

	mu         sync.Mutex
	nodes      int
	taskProlog string
	stopped    bool
	watchdog   *exec.Cmd
	watchW     *os.File
	watchErr   chan error
}

// StartError is returned when the cluster cannot be brought up. Output is
// the script's combined output (which already carries daemon log tails).
type StartError struct {
	Err    error
	Output string
}

func (e *StartError) Error() string {
	return fmt.Sprintf("slurm-up.sh: %v\n%s", e.Err, strings.TrimSpace(e.Output))
}

func (e *StartError) Unwrap() error { return e.Err }

// ScriptsDir returns the repository's scripts/ directory: $LENS_SLURM_SCRIPTS
// if set, else found relative to this source file.
func ScriptsDir() (string, error) {
	if d := os.Getenv("LENS_SLURM_SCRIPTS"); d != "" {
		return d, nil
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("cannot locate scripts/: runtime.Caller failed; set LENS_SLURM_SCRIPTS")
	}
	d := filepath.Join(filepath.Dir(file), "..", "..", "..", "scripts")
	if _, err := os.Stat(filepath.Join(d, "slurm-up.sh")); err != nil {
		return "", fmt.Errorf("cannot locate scripts/slurm-up.sh (set LENS_SLURM_SCRIPTS): %w", err)
	}
	return filepath.Clean(d), nil
}

// Options are the settings of scripts/slurm-up.sh besides the node count.
type Options struct {
	// Accounting turns on real accounting: slurmdbd backed by a private
	// MariaDB in the state dir (LENS_SLURM_ACCOUNTING=1), so that sacct
	// works. The cluster's jobs then have an account and a QOS.
	Accounting bool
	// Port is the SlurmctldPort (LENS_SLURM_PORT); the script uses the ports
	// above it too (docs in slurm-up.sh). 0 keeps the environment's
	// LENS_SLURM_PORT, or the script's default.
	Port int
	// ClusterName is the ClusterName (LENS_SLURM_CLUSTER); "" keeps the
	// environment's, or the script's default.
	ClusterName string
}

// env are the script's variables for o.
func (o Options) env() []string {
	var env []string
	if o.Accounting {
		env = append(env, "LENS_SLURM_ACCOUNTING=1")
	} else {
		env = append(env, "LENS_SLURM_ACCOUNTING=0")
	}
	if o.Port != 0 {
		env = append(env, fmt.Sprintf("LENS_SLURM_PORT=%d", o.Port))
	}
	if o.ClusterName != "" {
		env = append(env, "LENS_SLURM_CLUSTER="+o.ClusterName)
	}
	return env
}

// Start brings the cluster in stateDir up with nodes slurmd (1 or 2) by
// running scripts/slurm-up.sh (idempotent: an already running cluster with
// the same layout is reused). It also starts a watchdog that runs
// slurm-down.sh if this process dies without calling Stop.
func Start(ctx context.Context, stateDir string, nodes int) (*Cluster, error) {
	return StartWith(ctx, stateDir, nodes, Options{})
}

// StartWith is Start with the script's settings o.
func StartWith(ctx context.Context, stateDir string, nodes int, o Options) (*Cluster, error) {
	if nodes != 1 && nodes != 2 {
		return nil, fmt.Errorf("slurm.Start: nodes must be 1 or 2, got %d", nodes)
	}
	scripts, err := ScriptsDir()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(stateDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, err
	}
	c := &Cluster{StateDir: abs, scripts: scripts, opts: o}
	// The watchdog goes first so that a crash between the script and the
	// return still stops whatever the script started.
	if err := c.startWatchdog(); err != nil {
		return nil, err
	}
	if err := c.up(ctx, nodes); err != nil {
		c.stopWatchdog()
		// Stop what may have come up partially; recorded PIDs only.
		_ = c.down()
		return nil, err
	}
	return c, nil
}

// Nodes is the number of slurmd the cluster currently runs.
func (c *Cluster) Nodes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes
}

// Restart re-runs slurm-up.sh with another node count; a change of layout
// rewrites slurm.conf and restarts slurmctld and slurmd (queued jobs are
// lost). With the same node count it is a cheap no-op check.
func (c *Cluster) Restart(ctx context.Context, nodes int) error {
	if nodes != 1 && nodes != 2 {
		return fmt.Errorf("slurm.Restart: nodes must be 1 or 2, got %d", nodes)
	}
	return c.up(ctx, nodes)
}

func (c *Cluster) up(ctx context.Context, nodes int) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, StartTimeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(c.scripts, "slurm-up.sh"), c.StateDir, fmt.Sprint(nodes))
	c.mu.Lock()
	cmd.Env = CleanEnv(os.Environ(), "", append(c.opts.env(), "LENS_SLURM_TASKPROLOG="+c.taskProlog)...)
	c.mu.Unlock()
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", err, ctx.Err())
		}
		output := out.String()
		if !strings.Contains(output, "----- tail of ") { // the script did not print the logs itself
			output += c.LogTail(30)
		}
		return &StartError{Err: err, Output: output}
	}
	conf := ""
	for _, line := range strings.Split(out.String(), "\n") {
		if v, ok := strings.CutPrefix(line, "SLURM_CONF="); ok {
			conf = strings.TrimSpace(v)
		}
	}
	if conf == "" {
		return &StartError{Err: errors.New("no SLURM_CONF line in the output"), Output: out.String()}
	}
	c.mu.Lock()
	c.Conf = conf
	c.nodes = nodes
	c.stopped = false
	c.mu.Unlock()
	cfg, err := c.Config(ctx)
	if err != nil {
		return &StartError{Err: err, Output: out.String()}
	}
	c.Name = cfg["ClusterName"]
	if c.Name == "" {
		return &StartError{Err: errors.New("scontrol show config: no ClusterName"), Output: out.String()}
	}
	return nil
}

// SetTaskProlog configures slurm.conf's TaskProlog (an absolute program
// path; "" for none) and restarts the cluster with its current node count
// when that changes slurm.conf (queued jobs are lost). Later restarts keep
// it.
func (c *Cluster) SetTaskProlog(ctx context.Context, path string) error {
	c.mu.Lock()
	c.taskProlog = path
	nodes := c.nodes
	c.mu.Unlock()
	return c.up(ctx, nodes)
}

// Stop cancels all jobs and stops the daemons by their recorded PIDs
// (slurm-down.sh). It is safe to call more than once.
func (c *Cluster) Stop() error {
	c.stopWatchdog()
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return nil
	}
	c.stopped = true
	c.mu.Unlock()
	return c.down()
}

func (c *Cluster) down() error {
	ctx, cancel := context.WithTimeout(context.Background(), StopTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(c.scripts, "slurm-down.sh"), c.StateDir)
	cmd.Env = scriptEnv()
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("slurm-down.sh: %v\n%s", err, strings.TrimSpace(out.String()))
	}
	return nil
}

// startWatchdog starts `bash -c 'read; slurm-down.sh STATE'` in its own
// session, reading from a pipe whose only writer is this process: when this
// process dies (panic, test timeout, SIGINT) the pipe closes and the watchdog
// stops the cluster by its recorded PIDs.
func (c *Cluster) startWatchdog() error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(c.StateDir, "log"), 0o755); err != nil {
		r.Close()
		w.Close()
		return err
	}
	logf, err := os.OpenFile(filepath.Join(c.StateDir, "log", "watchdog.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		r.Close()
		w.Close()
		return err
	}
	defer logf.Close()
	cmd := exec.Command("bash", "-c", `read -r _ || true; echo "watchdog: parent gone, stopping cluster"; exec bash "$1" "$2"`,
		"slurm-watchdog", filepath.Join(c.scripts, "slurm-down.sh"), c.StateDir)
	cmd.Env = scriptEnv()
	cmd.Stdin = r
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return fmt.Errorf("start watchdog: %w", err)
	}
	r.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	c.mu.Lock()
	c.watchdog, c.watchW, c.watchErr = cmd, w, done
	c.mu.Unlock()
	return nil
}

func (c *Cluster) stopWatchdog() {
	c.mu.Lock()
	cmd, w, done := c.watchdog, c.watchW, c.watchErr
	c.watchdog, c.watchW, c.watchErr = nil, nil, nil
	c.mu.Unlock()
	if cmd == nil {
		return
	}
	// Kill it while it still blocks in read (we hold the only writer), so it
	// never runs slurm-down.sh concurrently with ours.
	_ = cmd.Process.Kill()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	w.Close()
}

// scriptEnv is the environment for the scripts: the caller's, minus any Slurm
// client input variables (SLURM_CONF is set by the scripts themselves).
func scriptEnv() []string {
	return CleanEnv(os.Environ(), "")
}

// logNoise are harmless daemon log lines left out of LogTail: PMIx is not
// installed (MpiDefault=none) and munged logs every root credential.
var logNoise = []string{
	"Unauthorized credential for client",
	"pmix",
	"Couldn't load specified plugin name for mpi/",
	"MPI: Cannot create context for mpi/",
}

// LogTail returns the last n lines of each daemon log (without known noise),
// for error messages.
func (c *Cluster) LogTail(n int) string {
	var b strings.Builder
	logs, _ := filepath.Glob(filepath.Join(c.StateDir, "log", "*"))
	for _, f := range logs {
		base := filepath.Base(f)
		if base == "apt.log" || base == "watchdog.log" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var lines []string
		for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
			noisy := strings.TrimSpace(l) == ""
			for _, x := range logNoise {
				noisy = noisy || strings.Contains(l, x)
			}
			if !noisy {
				lines = append(lines, l)
			}
		}
		if len(lines) == 0 {
			continue
		}
		if len(lines) > n {
			lines = lines[len(lines)-n:]
		}
		fmt.Fprintf(&b, "\n----- tail of %s -----\n%s\n", f, strings.Join(lines, "\n"))
	}
	return b.String()
}
