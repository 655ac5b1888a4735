// Command worker is the instrumented program of the lens-level end-to-end
// tests (e2e/lens_jaeger_test.go, e2e/exec_jaeger_test.go,
// e2e/example_sbatch_test.go).
//
// Worker mode (the default) does only what an instrumented Go program does:
//
//	cfg, _ := lens.FromEnv("", "")
//	h, _ := lens.Setup(ctx, cfg)           // + nv.dl.rank from $VAR with -rank-env VAR
//	ctx = TraceContext.Extract($TRACEPARENT, $TRACESTATE)
//	one span named -span, ended
//	h.Shutdown(ctx with a 10 s deadline)
//
// and writes a record (package e2e/internal/worker) with its pid, host name,
// the carrier and trace context it received, the span's ids and the
// resource, into -out DIR (stdout when -out is empty). -exit N makes it exit
// with status N afterwards.
//
// Parent mode (-mode parent) is a launcher: it publishes the job-level
// attributes (-attr KEY=VALUE..., plus nv.dl.world_size=-ranks) as its own
// carrier with carrier.Publish, and, while they are published, starts -ranks
// copies of itself in worker mode, each with the environment
// carrier.ChildEnv(nil, nil, {nv.dl.rank: k}); it waits for them and writes a
// record listing their pids and the carrier each was given. The parent
// itself sets up no telemetry.
//
// Usage:
//
//	worker [-mode worker|parent] [-span NAME] [-out DIR] [-label L] [-rank-env VAR] [-exit N]
//	worker -mode parent [-ranks N] [-attr KEY=VALUE]... [-span NAME] [-out DIR] [-label L] [-child-label L]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/nemolens/lens-go/e2e/internal/worker"
)

// shutdownTimeout bounds lens's Shutdown (the flush of the span).
const shutdownTimeout = 10 * time.Second

type attrFlags []string

func (a *attrFlags) String() string { return strings.Join(*a, ",") }
func (a *attrFlags) Set(s string) error {
	if k, _, ok := strings.Cut(s, "="); !ok || k == "" {
		return fmt.Errorf("want KEY=VALUE, got %q", s)
	}
	*a = append(*a, s)
	return nil
}

type options struct {
	mode       string
	span       string
	out        string
	label      string
	childLabel string
	rankEnv    string
	exit       int
	ranks      int
	attrs      attrFlags
}

func main() {
	var o options
	flag.StringVar(&o.mode, "mode", worker.ModeWorker, "worker or parent")
	flag.StringVar(&o.span, "span", envOr("LENS_WORKER_SPAN", "work"), "span `name` (default $LENS_WORKER_SPAN, else \"work\")")
	flag.StringVar(&o.out, "out", os.Getenv("LENS_WORKER_OUT"), "record `dir` (default $LENS_WORKER_OUT; empty: stdout)")
	flag.StringVar(&o.label, "label", envOr("LENS_WORKER_LABEL", ""), "record file `label` (default $LENS_WORKER_LABEL, else the mode)")
	flag.StringVar(&o.childLabel, "child-label", "", "parent: record `label` of the children (default \"child\")")
	flag.StringVar(&o.rankEnv, "rank-env", "", "worker: add nv.dl.rank = the integer in `VAR` as a caller attribute")
	flag.IntVar(&o.exit, "exit", 0, "worker: exit `status` after exporting")
	flag.IntVar(&o.ranks, "ranks", 2, "parent: number of children")
	flag.Var(&o.attrs, "attr", "parent: job-level carrier attribute `KEY=VALUE` to publish (repeatable)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "worker: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}
	if o.label == "" {
		o.label = o.mode
	}
	if o.childLabel == "" {
		o.childLabel = "child"
	}

	rec := &worker.Record{Mode: o.mode, Label: o.label, PID: os.Getpid(), PPID: os.Getppid()}
	rec.Hostname, _ = os.Hostname()
	rec.Carrier, rec.CarrierSet = os.LookupEnv("OTEL_RESOURCE_ATTRIBUTES")
	rec.Traceparent = os.Getenv("TRACEPARENT")
	rec.Tracestate = os.Getenv("TRACESTATE")
	rec.SlurmProcID = os.Getenv("SLURM_PROCID")

	ctx := context.Background()
	var err error
	switch o.mode {
	case worker.ModeWorker:
		err = runWorker(ctx, &o, rec)
	case worker.ModeParent:
		err = runParent(ctx, &o, rec)
	default:
		fmt.Fprintf(os.Stderr, "worker: unknown -mode %q\n", o.mode)
		os.Exit(2)
	}
	if err != nil {
		rec.Error = err.Error()
		fmt.Fprintln(os.Stderr, "worker:", err)
	}
	if werr := write(o.out, rec); werr != nil {
		fmt.Fprintln(os.Stderr, "worker: writing the record:", werr)
		os.Exit(1)
	}
	if err != nil {
		os.Exit(1)
	}
	os.Exit(o.exit)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func write(dir string, rec *worker.Record) error {
	if dir == "" {
		return writeStdout(rec)
	}
	return worker.Write(dir, rec)
}

// runParent publishes the job-level attributes and runs the children.
func runParent(ctx context.Context, o *options, rec *worker.Record) error {
	if o.ranks < 1 {
		return fmt.Errorf("-ranks must be positive, got %d", o.ranks)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	return publishAndRun(ctx, o.attrs, o.ranks, func(rank int, env []string) (worker.Child, error) {
		args := []string{"-mode", worker.ModeWorker, "-span", o.span, "-label", o.childLabel}
		if o.out != "" {
			args = append(args, "-out", o.out)
		}
		cmd := exec.Command(self, args...)
		cmd.Env = env
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		c := worker.Child{Rank: rank, Carrier: lookup(env, "OTEL_RESOURCE_ATTRIBUTES"), ExitCode: -1}
		if err := cmd.Start(); err != nil {
			return c, err
		}
		c.PID = cmd.Process.Pid
		err := cmd.Wait()
		c.ExitCode = cmd.ProcessState.ExitCode()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("child rank %d (pid %d): %v", rank, c.PID, err)
		}
		return c, err
	}, rec)
}

// lookup returns the last value of name in env ("" when absent).
func lookup(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

func atoi(name, s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%s=%q: not an integer", name, s)
	}
	return n, nil
}
