package resources

import (
	"context"
	"log/slog"

	"github.com/nemolens/lens-go/carrier"
)

// Options injects everything detection reads from the outside world, so
// that tests run in parallel without touching the process. The zero value
// means the live defaults, each read at call time (never captured at package
// initialisation).
type Options struct {
	// Env is the environment; nil means the process environment. The carrier
	// (OTEL_RESOURCE_ATTRIBUTES) is read from it too.
	Env carrier.Lookuper
	// Hostname returns the host name; nil means os.Hostname.
	Hostname func() (string, error)
	// PID is the process id to report; 0 means os.Getpid().
	PID int
	// GPUCount probes the number of GPUs; nil means [NvidiaSMIGPUCount]. It
	// is only consulted when CUDA_VISIBLE_DEVICES is absent; ok false omits
	// host.gpu.count.
	GPUCount func(ctx context.Context) (n int, ok bool)
	// KubernetesSecretsPath is the path whose existence (any file type)
	// activates Kubernetes detection; "" means
	// [DefaultKubernetesSecretsPath]. It is never read.
	KubernetesSecretsPath string
	// Logger receives DEBUG/WARN messages; nil means slog.Default() at call
	// time.
	Logger *slog.Logger
	// Explain, when not nil, receives the origin of every attribute.
	Explain *Explanation
}

func (o *Options) env() carrier.Lookuper { return orOS(o.Env) }
