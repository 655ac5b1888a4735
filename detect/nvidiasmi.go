package detect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"os/exec"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nemolens/lens-go/internal/pytext"
)

// DefaultNvidiaSMITimeout bounds every nvidia-smi run: 5 seconds, as the
// reference's subprocess timeout.
const DefaultNvidiaSMITimeout = 5 * time.Second

// maxProbeOutput caps what is read from nvidia-smi's standard output. A GPU
// line is a few hundred bytes, so 1 MiB is far above anything a real machine
// prints; a tool that prints more is not nvidia-smi doing its job.
const maxProbeOutput = 1 << 20

// errOutputTooLarge is the failure of a run whose standard output exceeded
// maxProbeOutput bytes.
var errOutputTooLarge = fmt.Errorf("nvidia-smi: output exceeds %d bytes", maxProbeOutput)

// NvidiaSMI runs the nvidia-smi tool. The zero value runs "nvidia-smi" found
// in the process's PATH with [DefaultNvidiaSMITimeout]. Its GPUCount method
// fits [WithGPUCount], and its Query method backs the live [NVML] of [GPU].
//
// Every run is bounded in time, output and processes:
//
//   - Time: the run ends after Timeout (default 5 s) or when the context
//     passed to the method is done, whichever comes first.
//   - Output: standard output is a pipe that the run reads itself, until
//     its end or one byte past 1 MiB; as soon as it exceeds 1 MiB, reading
//     stops, the tool is killed and the run fails. Whether an output is too
//     large depends only on how many bytes the tool wrote, never on
//     scheduling. Standard input and standard error are the null device.
//   - Processes: on unix the tool runs as the leader of a new process group
//     (Setpgid), and the timeout, the cancellation and the output cap kill
//     that whole group with SIGKILL, so a wrapper script's children die with
//     it; the group is killed once more when the tool has exited, which also
//     ends the output of any descendant still holding the pipe, so no
//     process the run started outlives it (short of one that leaves the
//     group with setsid or setpgid). The run ends when the tool has exited
//     and its output has ended: a process that left the group, or on other
//     systems any descendant, that keeps the pipe open makes the run last
//     until the timeout. On other systems only the tool itself is killed.
//
// Any failure (missing tool, timeout, cancellation, non-zero exit status,
// oversized output) is a failure of the method; nothing is logged.
//
// nvidia-smi is a local tool: it talks to the driver, never to the network.
type NvidiaSMI struct {
	// Path is the executable: a bare name is looked up in PATH. "" means
	// "nvidia-smi".
	Path string
	// Timeout bounds each run; 0 means DefaultNvidiaSMITimeout. The context
	// passed to a method bounds it too.
	Timeout time.Duration
	// InheritGroup runs the tool in the caller's process group instead of a
	// new one: for a caller whose own group is killed whole when its time
	// is up (lens exec's GPU probe process, docs/exec.md#what-runs-where),
	// so that the tool and its children die with it. The timeout, the
	// cancellation and the output cap then kill the tool alone.
	InheritGroup bool
}

// run executes the tool with args and returns its standard output. Any
// failure (missing tool, timeout, cancellation, non-zero exit, output over
// maxProbeOutput) is an error; a run that ended with its context returns the
// context's error.
func (n NvidiaSMI) run(ctx context.Context, args ...string) ([]byte, error) {
	out, _, err := n.runCounted(ctx, args...)
	return out, err
}

// runCounted is run that also reports how many bytes were read from the
// tool's standard output.
func (n NvidiaSMI) runCounted(ctx context.Context, args ...string) (out []byte, read int64, err error) {
	path := n.Path
	if path == "" {
		path = "nvidia-smi"
	}
	timeout := n.Timeout
	if timeout <= 0 {
		timeout = DefaultNvidiaSMITimeout
	}
	// A missing tool (every machine without an NVIDIA driver) fails here,
	// before a timer, a pipe and a process are set up: the failure
	// exec.Command would report, at a fraction of the cost.
	if _, err := exec.LookPath(path); err != nil {
		return nil, 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, 0, fmt.Errorf("nvidia-smi: output pipe: %w", err)
	}
	defer pr.Close()
	cmd := exec.CommandContext(ctx, path, args...)
	// An *os.File: the tool writes into the pipe itself, and os/exec starts
	// no goroutine that copies it. Stdin and Stderr stay nil: the null
	// device.
	cmd.Stdout = pw
	if !n.InheritGroup {
		setProcessGroup(cmd) // and cmd.Cancel kills that group
	}
	err = cmd.Start()
	// The tool holds its own copy of the write end; the read end reaches
	// its end when every process holding the pipe has closed it.
	pw.Close()
	if err != nil {
		return nil, 0, err
	}
	// cmd.Process is set: the reader may kill the group at the cap.
	output := make(chan cappedOutput, 1)
	go func() { output <- readCapped(pr, maxProbeOutput, func() { _ = killProcessGroup(cmd) }) }()
	waitErr := cmd.Wait()
	// Whatever happened, nothing the tool started outlives the run, and no
	// descendant in its group keeps the output open. The group id stays
	// allocated while any member lives, so this cannot reach an unrelated
	// process group unless the group is empty and its number was reused
	// within the last few microseconds.
	_ = killProcessGroup(cmd)
	var o cappedOutput
	select {
	case o = <-output:
	case <-ctx.Done():
		// The tool has exited, but a process outside its group (or,
		// without process groups, a descendant) holds the pipe open.
		// Stop the reader: what it read is classified below.
		if pr.SetReadDeadline(time.Now()) != nil {
			// The pipe cannot be interrupted (not pollable): leave the
			// reader, which owns its buffer, to end with the pipe.
			return nil, 0, fmt.Errorf("nvidia-smi: %w", ctx.Err())
		}
		o = <-output
	}
	switch {
	case o.exceeded:
		return nil, o.read, errOutputTooLarge
	case (waitErr != nil || o.err != nil) && ctx.Err() != nil:
		return nil, o.read, fmt.Errorf("nvidia-smi: %w", ctx.Err())
	case waitErr != nil:
		return nil, o.read, waitErr
	case o.err != nil:
		return nil, o.read, fmt.Errorf("nvidia-smi: reading the output: %w", o.err)
	}
	return o.out, o.read, nil
}

// cappedOutput is what readCapped read.
type cappedOutput struct {
	out      []byte // the output; nil when exceeded
	read     int64  // bytes taken from the reader
	exceeded bool   // more than the limit was read
	err      error  // the read error, if any (never io.EOF)
}

// readCapped reads r through a limited reader of limit+1 bytes, until its
// end or a read error. Reading the byte past limit marks the output
// exceeded, discards it and calls onExceed (which kills the tool); nothing
// more is read.
func readCapped(r io.Reader, limit int, onExceed func()) cappedOutput {
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(r, int64(limit)+1))
	if n > int64(limit) {
		if onExceed != nil {
			onExceed()
		}
		return cappedOutput{read: n, exceeded: true}
	}
	return cappedOutput{out: buf.Bytes(), read: n, err: err}
}

// GPUCount runs
//
//	nvidia-smi --query-gpu=count --format=csv,noheader
//
// (see [NvidiaSMI] for the bounds: the timeout, the 1 MiB output cap and the
// process-group kill) and, when it exits with status 0, returns the number of
// GPU records in its standard output: nvidia-smi prints one line per GPU,
// each holding the GPU count.
//
// The output is decoded as the reference's subprocess.run(..., text=True)
// does: it must be valid UTF-8 (else there is no count), and its universal
// newlines make "\n", "\r\n" and a lone "\r" the only line breaks ("\v",
// "\f", U+001C-U+001E, U+0085, U+2028 and U+2029 break no line). Each line is
// stripped of Python whitespace (docs/compatibility.md#whitespace), which does include
// those characters; blank lines are skipped, and every other line is a
// record and must be a base-10 integer: one or more ASCII digits 0-9,
// without sign. So "1\v2" is one line, not an integer: no count.
//
// It returns (0, false), logging nothing, when the tool is missing, times
// out, is cancelled through ctx, exits with a non-zero status, prints more
// than 1 MiB or invalid UTF-8, prints a non-blank line that is not an
// integer, or prints no record.
//
// Divergence from the reference, which counts every non-blank line: a
// non-blank line that is not an integer makes the whole output invalid and
// gives no count, because a line of garbage (an error message printed with
// status 0, a banner of a wrapper) is not a GPU, and a count built from it
// would be wrong. Output over 1 MiB gives no count (the reference reads it
// all). On timeout the reference kills the tool only, and it waits for the
// end of the output until its timeout when a descendant holds the pipe open
// after the tool exited; the port kills the whole process group, also when
// the tool exits, which ends such a descendant's output, and counts what was
// printed (a process that left the group still makes the run last until the
// timeout).
func (n NvidiaSMI) GPUCount(ctx context.Context) (int, bool) {
	count, err := n.gpuCount(ctx)
	return count, err == nil
}

// gpuCount is GPUCount with the reason when there is no count, for the
// explanation: which of the failures it was.
func (n NvidiaSMI) gpuCount(ctx context.Context) (int, error) {
	out, err := n.run(ctx, "--query-gpu=count", "--format=csv,noheader")
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return 0, errors.New("nvidia-smi is not installed (not found in PATH)")
	case errors.Is(err, context.DeadlineExceeded):
		return 0, errors.New("nvidia-smi timed out")
	case errors.Is(err, context.Canceled):
		return 0, errors.New("the GPU probe was cancelled")
	case err != nil:
		return 0, fmt.Errorf("nvidia-smi failed: %w", err)
	}
	if !utf8.Valid(out) {
		return 0, errors.New("nvidia-smi printed output that is not valid UTF-8")
	}
	count, ok := countGPURecords(out)
	switch {
	case ok:
		return count, nil
	case len(bytes.TrimSpace(out)) == 0:
		return 0, errors.New("nvidia-smi listed no GPU")
	}
	return 0, errors.New("nvidia-smi printed a line that is not a GPU count")
}

// NvidiaSMIGPUCount is the live GPU-count probe that [Local] uses when
// CUDA_VISIBLE_DEVICES is absent and no [WithGPUCount] is given: it runs
// `nvidia-smi --query-gpu=count --format=csv,noheader` from PATH with a
// 5-second timeout that ctx can shorten, reading at most 1 MiB of output, in
// a process group of its own that is killed whole on timeout, cancellation,
// oversized output and exit. It counts the lines that are base-10 integers
// and gives no count when a non-blank line is not one (the reference counts
// every non-blank line), when the output exceeds 1 MiB or is not valid UTF-8,
// or when the tool fails. It is NvidiaSMI{}.GPUCount; see
// [NvidiaSMI.GPUCount].
func NvidiaSMIGPUCount(ctx context.Context) (int, bool) {
	return NvidiaSMI{}.GPUCount(ctx)
}

// countGPURecords is the count of [NvidiaSMI.GPUCount] for the standard
// output of a successful `nvidia-smi --query-gpu=count` run.
func countGPURecords(out []byte) (int, bool) {
	lines, ok := outputLines(out)
	if !ok {
		return 0, false
	}
	count := 0
	for line := range lines {
		line = pytext.TrimSpace(line)
		if line == "" {
			continue
		}
		if !isDecimal(line) {
			return 0, false
		}
		count++
	}
	return count, count > 0
}

// isDecimal reports whether s is one or more ASCII digits.
func isDecimal(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// outputLines returns the lines of the tool's output as Python reads them
// with subprocess text=True (universal newlines) and then splits them at
// "\n": out must be valid UTF-8 (ok is false otherwise); "\r\n", "\r" and
// "\n" are the line breaks, and no other character is. The breaks are not
// part of the lines, and no empty line follows a final break.
func outputLines(out []byte) (lines iter.Seq[string], ok bool) {
	if !utf8.Valid(out) {
		return nil, false
	}
	s := string(out)
	return func(yield func(string) bool) {
		for s != "" {
			i := strings.IndexAny(s, "\r\n")
			if i < 0 {
				yield(s)
				return
			}
			if !yield(s[:i]) {
				return
			}
			if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			s = s[i+1:]
		}
	}, true
}
