package detect

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"time"

	"github.com/nemolens/lens-go/carrier"
)

// DefaultNvidiaSMITimeout bounds every nvidia-smi run (SPEC §1.2: 5 seconds).
const DefaultNvidiaSMITimeout = 5 * time.Second

// maxProbeOutput caps what is read from nvidia-smi; a GPU line is a few
// hundred bytes, so this is far above anything a real machine prints.
const maxProbeOutput = 1 << 20

// waitDelay bounds how long a killed nvidia-smi may keep its output pipe open
// (through children of its own) before the pipe is closed and Wait returns.
const waitDelay = 250 * time.Millisecond

// NvidiaSMI runs the nvidia-smi tool. The zero value runs "nvidia-smi" found
// in the process's PATH with [DefaultNvidiaSMITimeout]. Its GPUCount method
// fits [Options.GPUCount], and its Query method backs the live [NVML] of
// [DetectGPU].
//
// nvidia-smi is a local tool: it talks to the driver, never to the network.
type NvidiaSMI struct {
	// Path is the executable: a bare name is looked up in PATH. "" means
	// "nvidia-smi".
	Path string
	// Timeout bounds each run; 0 means DefaultNvidiaSMITimeout. The context
	// passed to a method bounds it too.
	Timeout time.Duration
}

// run executes the tool with args and returns its standard output. Any
// failure (missing tool, timeout, cancellation, non-zero exit) is an error.
func (n NvidiaSMI) run(ctx context.Context, args ...string) ([]byte, error) {
	path := n.Path
	if path == "" {
		path = "nvidia-smi"
	}
	timeout := n.Timeout
	if timeout <= 0 {
		timeout = DefaultNvidiaSMITimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out cappedBuffer
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdout = &out
	cmd.WaitDelay = waitDelay
	if err := cmd.Run(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// GPUCount runs `nvidia-smi --query-gpu=count --format=csv,noheader` and
// returns the number of non-blank output lines (nvidia-smi prints one line
// per GPU). A missing tool, a timeout, a cancelled ctx, a non-zero exit
// status or output without a non-blank line give (0, false); nothing is
// logged or returned as an error (SPEC §1.2).
func (n NvidiaSMI) GPUCount(ctx context.Context) (int, bool) {
	out, err := n.run(ctx, "--query-gpu=count", "--format=csv,noheader")
	if err != nil {
		return 0, false
	}
	count := 0
	for line := range strings.SplitSeq(string(out), "\n") {
		if carrier.TrimSpace(line) != "" {
			count++
		}
	}
	if count == 0 {
		return 0, false
	}
	return count, true
}

// NvidiaSMIGPUCount is the live GPU-count probe that [DetectLocal] uses when
// CUDA_VISIBLE_DEVICES is absent and [Options.GPUCount] is nil: it runs
// `nvidia-smi --query-gpu=count --format=csv,noheader` from PATH with a
// 5-second timeout that ctx can shorten. See [NvidiaSMI.GPUCount].
func NvidiaSMIGPUCount(ctx context.Context) (int, bool) {
	return NvidiaSMI{}.GPUCount(ctx)
}

// cappedBuffer keeps the first maxProbeOutput bytes written and discards the
// rest without failing the writer.
type cappedBuffer struct{ bytes.Buffer }

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := maxProbeOutput - b.Len(); room > 0 {
		if len(p) > room {
			b.Buffer.Write(p[:room])
		} else {
			b.Buffer.Write(p)
		}
	}
	return len(p), nil
}
