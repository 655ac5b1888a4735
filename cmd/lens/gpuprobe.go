package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/bounded"
	"github.com/nemolens/lens-go/lensconv"
)

// gpuProbeArg, as lens's only argument after the program name (with a mode
// after it), makes lens the GPU probe process of another lens: it reads the
// NVIDIA driver's tree and runs nvidia-smi, in the process group its parent
// kills when its time is up, and writes what it found to standard output
// (docs/exec.md#what-runs-where). It is not a command: no help lists it.
const gpuProbeArg = "lens-internal-gpu-probe"

// The probe's modes: the GPU identity alone (lens detect --only gpus), or
// the identity then the nvidia-smi GPU count (lens exec without
// CUDA_VISIBLE_DEVICES).
const (
	probeIdentity = "identity"
	probeCounting = "identity+count"
)

// probeAnswer is one line of the probe's output: the identity first, then
// the count when asked for.
type probeAnswer struct {
	Devices  []detect.GPUDevice `json:"devices,omitempty"`
	Error    string             `json:"error,omitempty"`
	NoDriver bool               `json:"no_driver,omitempty"`
	Count    *int               `json:"count,omitempty"`
}

// isGPUProbe reports whether args (os.Args) start the GPU probe process.
func isGPUProbe(args []string) bool { return len(args) == 3 && args[1] == gpuProbeArg }

// gpuProbeMain is the GPU probe process (args: os.Args): it answers on out
// and returns its exit status. Its nvidia-smi runs stay in its process
// group (NvidiaSMI.InheritGroup), so that its parent's kill of the group
// ends them too.
func gpuProbeMain(args []string, env environ.Lookuper, out io.Writer) int {
	mode := args[2]
	if mode != probeIdentity && mode != probeCounting {
		fmt.Fprintf(os.Stderr, "lens: %s: unknown mode %q\n", gpuProbeArg, mode)
		return 2
	}
	bounded.EndWithParent(os.Stdin) // nothing of the probe outlives its lens
	dropSentFaults()
	ctx := context.Background()
	smi := detect.NvidiaSMI{InheritGroup: true}
	enc := json.NewEncoder(out)
	var id probeAnswer
	devs, err := detect.VisibleGPUs(ctx, detect.WithEnv(env), detect.WithNvidiaSMI(smi))
	id.Devices = devs
	if err != nil {
		id.Error, id.NoDriver = err.Error(), errors.Is(err, detect.ErrNoGPUDriver)
	}
	if enc.Encode(id) != nil {
		return 1
	}
	if mode == probeCounting {
		n, ok := smi.GPUCount(ctx)
		if !ok {
			n = -1
		}
		if enc.Encode(probeAnswer{Count: &n}) != nil {
			return 1
		}
	}
	return 0
}

// selfExecutable is the file lens runs itself from for its probe: the
// kernel's link to this process's executable, which works even when the
// file has been replaced or removed since lens started.
func selfExecutable() string {
	if runtime.GOOS == "linux" {
		return "/proc/self/exe"
	}
	if p, err := os.Executable(); err == nil {
		return p
	}
	return os.Args[0]
}

// gpuProbe is lens exec's GPU probe: a lens process of its own
// (gpuProbeMain), started beside the command so that it never delays its
// start, that reads the driver's tree and runs nvidia-smi. A read asleep
// in a hung driver holds that process, never lens: when the probe's time is
// up lens kills its process group and goes on without waiting for it
// (docs/exec.md#what-runs-where). idDone is closed once the identity has
// been read (or will not be), done once everything the probe will say has
// been read and the probe has been reaped or stopped.
type gpuProbe struct {
	done, idDone chan struct{}
	child        *bounded.Child
	counting     bool
	n            int
	ok           bool
	devs         []detect.GPUDevice
	devErr       error
}

// errProbeSilent is the identity's failure when the probe ended without
// giving it.
var errProbeSilent = errors.New("the GPU probe ended without an answer")

// probeFailure is the GPU identity's failure as the probe reported it.
type probeFailure struct {
	msg      string
	noDriver bool
}

func (e *probeFailure) Error() string { return e.msg }

// Is makes a failure for want of a driver errors.Is ErrNoGPUDriver.
func (e *probeFailure) Is(target error) bool { return e.noDriver && target == detect.ErrNoGPUDriver }

// startGPUProbe starts the probe process with lens's environment; the
// count is asked for when counting.
func (a *app) startGPUProbe(counting bool) *gpuProbe {
	g := &gpuProbe{done: make(chan struct{}), idDone: make(chan struct{}), counting: counting}
	mode := probeIdentity
	if counting {
		mode = probeCounting
	}
	self := selfExecutable()
	child, err := bounded.Start(bounded.Command{Path: self, Args: []string{self, gpuProbeArg, mode}, Env: a.environ()})
	if err != nil {
		g.devErr = fmt.Errorf("starting the GPU probe: %w", err)
		close(g.idDone)
		close(g.done)
		return g
	}
	g.child = child
	go g.read()
	return g
}

// read takes the probe's answers until its output ends or it is stopped,
// then waits until it has been reaped or stopped: lens as PID 1 reaps
// orphans only after that, so that nothing else reaps the probe.
func (g *gpuProbe) read() {
	defer close(g.done)
	idClosed := false
	closeID := func() {
		if !idClosed {
			idClosed = true
			close(g.idDone)
		}
	}
	defer closeID()
	g.devErr = errProbeSilent
	for i := 0; ; i++ {
		line, err := g.child.Next(context.Background())
		if err != nil {
			break
		}
		var ans probeAnswer
		if err := json.Unmarshal(line, &ans); err != nil {
			g.devErr = fmt.Errorf("the GPU probe's answer %q: %w", truncate(string(line), 80), err)
			closeID()
			continue
		}
		switch {
		case i == 0:
			g.devs, g.devErr = ans.Devices, nil
			if ans.Error != "" {
				g.devErr = &probeFailure{msg: ans.Error, noDriver: ans.NoDriver}
			}
			closeID()
		case ans.Count != nil && g.counting:
			g.n, g.ok = *ans.Count, *ans.Count >= 0
		}
	}
	closeID()
	select {
	case <-g.child.Exited():
	case <-g.child.Stopped():
	}
}

// truncate returns s cut to n bytes with "…" when longer.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// stop kills the probe's process group, if it still runs, and returns once
// lens has stopped reading it; it never waits for the probe to end.
func (g *gpuProbe) stop() {
	if g.child != nil {
		g.child.Stop()
	}
	<-g.done
}

// finished reports whether c is closed.
func finished(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// complete adds what the probe found by ctx's end to attrs, and stops what it
// has not finished by then (killing its process group, without waiting for
// it), saying on stderr what the span goes without (docs/exec.md#gpu-probe).
func (g *gpuProbe) complete(ctx context.Context, a *app, attrs *attr.Map) (changed bool) {
	select {
	case <-g.done:
	case <-ctx.Done():
	}
	countIn, idIn := finished(g.done), finished(g.idDone)
	if !countIn || !idIn {
		g.stop()
	}
	if countIn && g.counting && g.ok {
		attrs.Set(lensconv.HostGPUCount, attr.Int(g.n))
		changed = true
	}
	var missing []string
	if !countIn && g.counting {
		missing = append(missing, lensconv.HostGPUCount)
	}
	switch {
	case !idIn:
		missing = append(missing, "the GPU identity (nv.gpu.visible.*)")
	case g.devErr == nil:
		if ids := detect.VisibleGPUAttributes(g.devs); ids.Len() > 0 {
			attrs.Update(ids)
			changed = true
		}
	case !errors.Is(g.devErr, detect.ErrNoGPUDriver):
		fmt.Fprintf(a.stderr, "lens exec: GPU identity: %s: the span goes without nv.gpu.visible.*\n", oneLine(g.devErr))
	}
	if len(missing) > 0 {
		fmt.Fprintf(a.stderr, "lens exec: the GPU probe had not finished within half of --flush-timeout and was stopped: the span goes without %s\n", strings.Join(missing, " and "))
	}
	return changed
}

// detectGPUBound bounds lens detect --only gpus: the probe's driver-tree
// read and its nvidia-smi run (5 s each at most when they answer) and the
// probe's start, with room on a loaded machine.
const detectGPUBound = 30 * time.Second

// probeGPUs runs the GPU probe for the identity alone and returns what it
// found, or, when it has not answered within bound (or by ctx's end), an
// error saying so: the probe is then stopped and lens goes on
// (docs/exec.md#what-runs-where).
func (a *app) probeGPUs(ctx context.Context, bound time.Duration) ([]detect.GPUDevice, error) {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	g := a.startGPUProbe(false)
	select {
	case <-g.idDone:
		g.stop()
		return g.devs, g.devErr
	case <-ctx.Done():
		g.stop()
		return nil, fmt.Errorf("the GPU probe had not answered within %s (a driver that does not answer?) and was stopped", bound)
	}
}
