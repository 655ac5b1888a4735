package lensprocessor

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/nemolens/lens-go/detect"
)

// Defaults of [Config].
const (
	DefaultProcRoot        = "/proc"
	DefaultCacheSize       = 4096
	MaxCacheSize           = 1 << 20
	DefaultResolveTimeout  = 20 * time.Millisecond
	DefaultRefreshInterval = 15 * time.Second
	DefaultMaxEnvironBytes = 1 << 20
	// GPUInfoMetric is the name of the per-GPU info series.
	GPUInfoMetric = "lens.gpu.job"
)

// DefaultGPULabels are the job attributes the GPU info series (and the
// data points, with labels_on_points) carry, when the job has them.
var DefaultGPULabels = []string{
	"slurm.job.id", "nv.dl.job.uuid", "nemo.run.id", "nv.dl.rank", "nv.dl.local_rank",
	"k8s.namespace.name", "k8s.pod.name",
}

// Config is the lens processor's configuration (README.md, docs/collector.md).
type Config struct {
	// RankFrom names the launcher whose variables give nv.dl.rank,
	// nv.dl.world_size and nv.dl.local_rank: "" (none), slurm, torchrun,
	// mpi, k8s-index (the values of lens exec --rank-from).
	RankFrom string `mapstructure:"rank_from"`
	// ProcRoot is where procfs is mounted (default /proc).
	ProcRoot string `mapstructure:"proc_root"`
	// Hostname is this node's name, compared with a resource's host.name
	// (default: os.Hostname).
	Hostname string `mapstructure:"hostname"`
	// CacheSize bounds the number of processes whose attributes are kept
	// (an LRU keyed by pid and start time).
	CacheSize int `mapstructure:"cache_size"`
	// ResolveTimeout is how long a batch waits for a process that is not
	// in the cache to be read; a slower read finishes in the background and
	// its result serves the next batches. 0 never waits.
	ResolveTimeout time.Duration `mapstructure:"resolve_timeout"`
	// MaxEnvironBytes bounds the read of /proc/<pid>/environ.
	MaxEnvironBytes int `mapstructure:"max_environ_bytes"`
	// GPU configures the GPU series.
	GPU GPUConfig `mapstructure:"gpu"`
}

// GPUConfig configures the association of GPU series (DCGM exporter's
// labels) with the job holding the GPU.
type GPUConfig struct {
	// Enabled turns the GPU association on (default true).
	Enabled bool `mapstructure:"enabled"`
	// InfoSeries emits the lens.gpu.job info series (default true).
	InfoSeries bool `mapstructure:"info_series"`
	// LabelsOnPoints adds the job's labels to every GPU data point
	// (default false: it multiplies series).
	LabelsOnPoints bool `mapstructure:"labels_on_points"`
	// Labels are the job attributes the info series carries.
	Labels []string `mapstructure:"labels"`
	// NvidiaProcfs is the NVIDIA driver's GPU tree (default: the
	// Collector's LENS_NVIDIA_PROCFS, else <proc_root>/driver/nvidia/gpus).
	NvidiaProcfs string `mapstructure:"nvidia_procfs"`
	// RefreshInterval is how often the node's processes are scanned for
	// the GPUs they hold.
	RefreshInterval time.Duration `mapstructure:"refresh_interval"`
}

func createDefaultConfig() *Config {
	return &Config{
		ProcRoot:        DefaultProcRoot,
		CacheSize:       DefaultCacheSize,
		ResolveTimeout:  DefaultResolveTimeout,
		MaxEnvironBytes: DefaultMaxEnvironBytes,
		GPU: GPUConfig{
			Enabled:         true,
			InfoSeries:      true,
			Labels:          append([]string(nil), DefaultGPULabels...),
			RefreshInterval: DefaultRefreshInterval,
		},
	}
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	var errs []error
	if c.RankFrom != "" && !detect.ValidRankFrom(c.RankFrom) {
		errs = append(errs, fmt.Errorf("rank_from %q: want one of \"\", %s", c.RankFrom, strings.Join(detect.RankSources(), ", ")))
	}
	if c.ProcRoot == "" || !filepath.IsAbs(c.ProcRoot) {
		errs = append(errs, fmt.Errorf("proc_root %q: want an absolute path", c.ProcRoot))
	}
	if c.CacheSize < 1 || c.CacheSize > MaxCacheSize {
		errs = append(errs, fmt.Errorf("cache_size %d: want 1 to %d", c.CacheSize, MaxCacheSize))
	}
	if c.ResolveTimeout < 0 || c.ResolveTimeout > time.Second {
		errs = append(errs, fmt.Errorf("resolve_timeout %v: want 0 to 1s (a batch never waits longer for /proc)", c.ResolveTimeout))
	}
	if c.MaxEnvironBytes < 4096 || c.MaxEnvironBytes > 64<<20 {
		errs = append(errs, fmt.Errorf("max_environ_bytes %d: want 4096 to %d", c.MaxEnvironBytes, 64<<20))
	}
	if c.GPU.Enabled {
		if c.GPU.RefreshInterval < time.Second {
			errs = append(errs, fmt.Errorf("gpu.refresh_interval %v: want at least 1s", c.GPU.RefreshInterval))
		}
		if !c.GPU.InfoSeries && !c.GPU.LabelsOnPoints {
			errs = append(errs, errors.New("gpu: info_series and labels_on_points are both off: set gpu.enabled to false instead"))
		}
		if len(c.GPU.Labels) == 0 {
			errs = append(errs, errors.New("gpu.labels is empty"))
		}
		if c.GPU.NvidiaProcfs != "" && !filepath.IsAbs(c.GPU.NvidiaProcfs) {
			errs = append(errs, fmt.Errorf("gpu.nvidia_procfs %q: want an absolute path", c.GPU.NvidiaProcfs))
		}
	}
	return errors.Join(errs...)
}
