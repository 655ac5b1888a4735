package lensprocessor

import (
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/confmap"
)

// TestConfigUnmarshal: the keys of README.md's table, as the Collector
// unmarshals a configuration file's section.
func TestConfigUnmarshal(t *testing.T) {
	t.Parallel()
	conf := confmap.NewFromStringMap(map[string]any{
		"rank_from":         "torchrun",
		"proc_root":         "/host/proc",
		"hostname":          "gpu-17",
		"cache_size":        100,
		"resolve_timeout":   "5ms",
		"max_environ_bytes": 65536,
		"gpu": map[string]any{
			"info_series":      false,
			"labels_on_points": true,
			"labels":           []any{"slurm.job.id"},
			"nvidia_procfs":    "/host/proc/driver/nvidia/gpus",
			"refresh_interval": "1m",
		},
	})
	cfg := createDefaultConfig()
	if err := conf.Unmarshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	want := Config{RankFrom: "torchrun", ProcRoot: "/host/proc", Hostname: "gpu-17", CacheSize: 100,
		ResolveTimeout: 5 * time.Millisecond, MaxEnvironBytes: 65536,
		GPU: GPUConfig{Enabled: true, LabelsOnPoints: true, Labels: []string{"slurm.job.id"},
			NvidiaProcfs: "/host/proc/driver/nvidia/gpus", RefreshInterval: time.Minute}}
	if cfg.RankFrom != want.RankFrom || cfg.ProcRoot != want.ProcRoot || cfg.Hostname != want.Hostname ||
		cfg.CacheSize != want.CacheSize || cfg.ResolveTimeout != want.ResolveTimeout || cfg.MaxEnvironBytes != want.MaxEnvironBytes ||
		cfg.GPU.Enabled != want.GPU.Enabled || cfg.GPU.InfoSeries || !cfg.GPU.LabelsOnPoints ||
		!slices.Equal(cfg.GPU.Labels, want.GPU.Labels) || cfg.GPU.NvidiaProcfs != want.GPU.NvidiaProcfs ||
		cfg.GPU.RefreshInterval != want.GPU.RefreshInterval {
		t.Errorf("unmarshalled %+v, want %+v", *cfg, want)
	}
	bad := confmap.NewFromStringMap(map[string]any{"rank_form": "slurm"})
	if err := bad.Unmarshal(createDefaultConfig()); err == nil {
		t.Error("a misspelt key is accepted")
	}
}
