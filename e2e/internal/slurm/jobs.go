package slurm

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// Env returns a clean submitter environment for this cluster: the current
// process environment without any SLURM_*/SLURMD_* variable (see CleanEnv),
// with SLURM_CONF set, plus extra "KEY=VALUE" entries (for example
// "OTEL_RESOURCE_ATTRIBUTES=...").
func (c *Cluster) Env(extra ...string) []string {
	c.mu.Lock()
	conf := c.Conf
	c.mu.Unlock()
	return CleanEnv(os.Environ(), conf, extra...)
}

// Result is the output of a finished client command.
type Result struct {
	Stdout, Stderr string
	Elapsed        time.Duration
}

// CommandError describes a failed client command, with the daemon log tails.
type CommandError struct {
	Args    []string
	Err     error
	Result  Result
	LogTail string
}

func (e *CommandError) Error() string {
	return fmt.Sprintf("%s: %v\nstdout:\n%s\nstderr:\n%s%s", strings.Join(e.Args, " "), e.Err,
		strings.TrimSpace(e.Result.Stdout), strings.TrimSpace(e.Result.Stderr), e.LogTail)
}

func (e *CommandError) Unwrap() error { return e.Err }

// Run runs a client command (srun, sbatch, squeue, ...) with env (nil: the
// clean Env()) and stdin from /dev/null. Without a deadline in ctx it is
// bounded by CommandTimeout.
func (c *Cluster) Run(ctx context.Context, env []string, name string, args ...string) (Result, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, CommandTimeout)
		defer cancel()
	}
	if env == nil {
		env = c.Env()
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	cmd.Stdin = nil // /dev/null
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String(), Elapsed: time.Since(start)}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", err, ctx.Err())
		}
		return res, &CommandError{Args: append([]string{name}, args...), Err: err, Result: res, LogTail: c.LogTail(15)}
	}
	return res, nil
}

// Srun runs `srun ARGS...` synchronously.
func (c *Cluster) Srun(ctx context.Context, env []string, args ...string) (Result, error) {
	return c.Run(ctx, env, "srun", args...)
}

// Sbatch submits `sbatch --parsable ARGS...` and returns the job id it
// prints (for an array: the array job id).
func (c *Cluster) Sbatch(ctx context.Context, env []string, args ...string) (string, error) {
	res, err := c.Run(ctx, env, "sbatch", append([]string{"--parsable"}, args...)...)
	if err != nil {
		return "", err
	}
	// --parsable prints "jobid" or "jobid;cluster".
	id, _, _ := strings.Cut(strings.TrimSpace(res.Stdout), ";")
	if !isJobID(id) {
		return "", fmt.Errorf("sbatch --parsable: unexpected output %q (stderr %q)", res.Stdout, res.Stderr)
	}
	return id, nil
}

var grantedRE = regexp.MustCompile(`Granted job allocation (\d+)`)

// Salloc runs `salloc ARGS...` non-interactively (stdin /dev/null) and
// returns the job id from salloc's own "Granted job allocation N" message.
func (c *Cluster) Salloc(ctx context.Context, env []string, args ...string) (string, Result, error) {
	res, err := c.Run(ctx, env, "salloc", args...)
	m := grantedRE.FindStringSubmatch(res.Stderr)
	if err != nil {
		return "", res, err
	}
	if m == nil {
		return "", res, fmt.Errorf("salloc: no 'Granted job allocation' in stderr %q", res.Stderr)
	}
	return m[1], res, nil
}

// Queue returns `squeue -h -j ID -o FORMAT` lines (empty when the job has left
// the queue; an id slurmctld no longer knows also counts as gone).
func (c *Cluster) Queue(ctx context.Context, jobID, format string) ([]string, error) {
	res, err := c.Run(ctx, nil, "squeue", "-h", "-j", jobID, "-o", format)
	if err != nil {
		if strings.Contains(res.Stderr, "Invalid job id") {
			return nil, nil
		}
		return nil, err
	}
	var lines []string
	for _, l := range strings.Split(res.Stdout, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines, nil
}

// WaitGone polls squeue every PollInterval until the job (for an array job
// id: all its tasks) has left the queue. Bounded by ctx (CommandTimeout
// without a deadline).
func (c *Cluster) WaitGone(ctx context.Context, jobID string) error {
	return c.poll(ctx, "job "+jobID+" to leave the queue", func(ctx context.Context) (bool, string, error) {
		lines, err := c.Queue(ctx, jobID, "%i %T %r")
		return len(lines) == 0, strings.Join(lines, "; "), err
	})
}

// WaitState polls until `squeue -o %T` reports state for the job.
func (c *Cluster) WaitState(ctx context.Context, jobID, state string) error {
	return c.poll(ctx, "job "+jobID+" to be "+state, func(ctx context.Context) (bool, string, error) {
		lines, err := c.Queue(ctx, jobID, "%T")
		return len(lines) == 1 && lines[0] == state, strings.Join(lines, "; "), err
	})
}

// Requeue requeues a running batch job and restarts it at once: `scontrol
// requeue`, wait until the job is PENDING again (the requeue completes asynchronously
// and sets the begin time to now+121 s), then `scontrol update JobId=ID
// StartTime=now` so it restarts at once.
//
// One more race: slurmd refuses to launch a batch job whose credential is not
// strictly newer, in whole seconds, than the revocation the requeue's kill
// left behind ("Job N already killed, do not launch batch job", then
// "Killing non-startable batch JobId=N: Job credential revoked" and the job
// ends with exit code 1). Slurm's own 121 s delay avoids that; here the
// StartTime update waits until the wall clock is in a later second than the
// moment `scontrol requeue` returned (the kill is stamped before that).
func (c *Cluster) Requeue(ctx context.Context, jobID string) error {
	if _, err := c.Run(ctx, nil, "scontrol", "requeue", jobID); err != nil {
		return err
	}
	notBefore := time.Now().Truncate(time.Second).Add(time.Second + 50*time.Millisecond)
	if err := c.WaitState(ctx, jobID, "PENDING"); err != nil {
		return err
	}
	if d := time.Until(notBefore); d > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
	_, err := c.Run(ctx, nil, "scontrol", "update", "JobId="+jobID, "StartTime=now")
	return err
}

func (c *Cluster) poll(ctx context.Context, what string, check func(context.Context) (bool, string, error)) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, CommandTimeout)
		defer cancel()
	}
	start := time.Now()
	last := ""
	for {
		done, state, err := check(ctx)
		if err != nil && ctx.Err() == nil {
			return err
		}
		if done {
			return nil
		}
		if state != "" {
			last = state
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %v after %v (last squeue: %q)%s", what, ctx.Err(),
				time.Since(start).Round(time.Millisecond), last, c.LogTail(15))
		case <-time.After(PollInterval):
		}
	}
}

// Job is one record of `scontrol -o show job`: Key → Value (JobId,
// ArrayJobId, ArrayTaskId, JobName, JobState, Restarts, NumNodes, NumTasks,
// NodeList, BatchHost, Partition, UserId, ...).
type Job map[string]string

// ShowJob returns `scontrol -o show job ID` (for an array job id: one record
// per task once they have started). Completed jobs stay visible for
// MinJobAge (300 s).
func (c *Cluster) ShowJob(ctx context.Context, jobID string) ([]Job, error) {
	res, err := c.Run(ctx, nil, "scontrol", "-o", "show", "job", jobID)
	if err != nil {
		return nil, err
	}
	return ParseShowJob(res.Stdout), nil
}

// Jobs returns every job slurmctld knows (`scontrol -o show job`).
func (c *Cluster) Jobs(ctx context.Context) ([]Job, error) {
	res, err := c.Run(ctx, nil, "scontrol", "-o", "show", "job")
	if err != nil {
		if strings.Contains(res.Stdout+res.Stderr, "No jobs in the system") {
			return nil, nil
		}
		return nil, err
	}
	return ParseShowJob(res.Stdout), nil
}

// JobsNamed returns the jobs whose JobName is name.
func (c *Cluster) JobsNamed(ctx context.Context, name string) ([]Job, error) {
	all, err := c.Jobs(ctx)
	if err != nil {
		return nil, err
	}
	var out []Job
	for _, j := range all {
		if j["JobName"] == name {
			out = append(out, j)
		}
	}
	return out, nil
}

// ParseShowJob parses one-line `scontrol -o show job` output. Values that
// contain spaces (tokens without '=') are joined to the previous value.
func ParseShowJob(out string) []Job {
	var jobs []Job
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || !strings.HasPrefix(line, "JobId=") {
			continue
		}
		j := Job{}
		last := ""
		for _, tok := range strings.Fields(line) {
			k, v, ok := strings.Cut(tok, "=")
			if !ok || k == "" {
				if last != "" {
					j[last] += " " + tok
				}
				continue
			}
			j[k] = v
			last = k
		}
		jobs = append(jobs, j)
	}
	return jobs
}

// Config returns `scontrol show config` as Key → Value.
func (c *Cluster) Config(ctx context.Context) (map[string]string, error) {
	res, err := c.Run(ctx, nil, "scontrol", "show", "config")
	if err != nil {
		return nil, err
	}
	cfg := map[string]string{}
	for _, line := range strings.Split(res.Stdout, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		cfg[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return cfg, nil
}

func isJobID(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
