package detect

import (
	"context"
	"log/slog"

	"github.com/nemolens/lens-go/environ"
)

// Option injects something detection reads from the outside world, so that
// tests run in parallel without touching the process. Without options every
// function reads the live process at call time (never at package
// initialisation). Each function documents the options it uses and ignores
// the others.
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// config is what the options set. Its zero value means the live defaults.
type config struct {
	env         environ.Lookuper
	hostname    func() (string, error)
	pid         int
	gpuCount    func(ctx context.Context) (n int, ok bool)
	secretsPath string
	logger      *slog.Logger
	explain     *Explanation
	nvml        NVML
	localRank   *int
	// nvidiaProcfs and smi are VisibleGPUs's backends.
	nvidiaProcfs string
	smi          *NvidiaSMI
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	if c.env == nil {
		c.env = environ.OS{}
	}
	return c
}

// WithEnv sets the environment detection reads (nil: the process
// environment). The carrier, OTEL_RESOURCE_ATTRIBUTES, is read from it too.
func WithEnv(env environ.Lookuper) Option {
	return optionFunc(func(c *config) { c.env = env })
}

// WithHostname sets the host-name lookup (default os.Hostname).
func WithHostname(f func() (string, error)) Option {
	return optionFunc(func(c *config) { c.hostname = f })
}

// WithPID sets the process id to report (default os.Getpid(); 0 means the
// default).
func WithPID(pid int) Option {
	return optionFunc(func(c *config) { c.pid = pid })
}

// WithGPUCount sets the GPU-count probe (default [NvidiaSMIGPUCount]). It is
// consulted only when CUDA_VISIBLE_DEVICES is absent; ok false omits
// host.gpu.count.
func WithGPUCount(f func(ctx context.Context) (n int, ok bool)) Option {
	return optionFunc(func(c *config) { c.gpuCount = f })
}

// WithKubernetesSecretsPath sets the path whose existence (any file type)
// activates Kubernetes detection (default [DefaultKubernetesSecretsPath]).
// The path is never read.
func WithKubernetesSecretsPath(path string) Option {
	return optionFunc(func(c *config) { c.secretsPath = path })
}

// WithLogger sets the logger of detection's DEBUG and WARN messages (nil:
// slog.Default() at call time).
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) { c.logger = l })
}

// WithExplanation records the origin of every attribute in e (see
// [Explanation]); nil records nothing.
func WithExplanation(e *Explanation) Option {
	return optionFunc(func(c *config) { c.explain = e })
}

// WithNVML sets the device library [GPU] queries (default: a snapshot from
// nvidia-smi, [NvidiaSMI.Query]).
func WithNVML(n NVML) Option {
	return optionFunc(func(c *config) { c.nvml = n })
}

// WithLocalRank sets the local rank [GPU] uses instead of reading LOCAL_RANK
// and SLURM_LOCALID.
func WithLocalRank(rank int) Option {
	return optionFunc(func(c *config) { c.localRank = &rank })
}

// WithNvidiaProcfs sets the directory of the NVIDIA driver's per-GPU files
// [VisibleGPUs] reads (default: LENS_NVIDIA_PROCFS, else
// [DefaultNvidiaProcfs]).
func WithNvidiaProcfs(dir string) Option {
	return optionFunc(func(c *config) { c.nvidiaProcfs = dir })
}

// WithNvidiaSMI sets the nvidia-smi [VisibleGPUs] runs when the driver's
// procfs tree cannot be used or a MIG id must be resolved (default:
// NvidiaSMI{}, "nvidia-smi" from PATH).
func WithNvidiaSMI(n NvidiaSMI) Option {
	return optionFunc(func(c *config) { c.smi = &n })
}
