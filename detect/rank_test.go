package detect_test

import (
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
)

// TestRanks pins docs/detection.md#detect-ranks: each launcher's variables,
// the strict integer rule, and one warning per missing or invalid variable.
func TestRanks(t *testing.T) {
	t.Parallel()
	rank, world, local := attribute.Key("nv.dl.rank"), attribute.Key("nv.dl.world_size"), attribute.Key("nv.dl.local_rank")
	tests := []struct {
		name     string
		from     string
		env      environ.Map
		want     []attribute.KeyValue
		warnings []string // substrings, one per expected warning
	}{
		{
			name: "slurm",
			from: detect.RankFromSlurm,
			env:  environ.Map{"SLURM_PROCID": "5", "SLURM_NTASKS": "16", "SLURM_LOCALID": "1", "RANK": "9", "WORLD_SIZE": "99"},
			want: []attribute.KeyValue{rank.Int64(5), world.Int64(16), local.Int64(1)},
		},
		{
			name: "torchrun",
			from: detect.RankFromTorchrun,
			env:  environ.Map{"RANK": "7", "WORLD_SIZE": "8", "LOCAL_RANK": "3", "SLURM_PROCID": "0"},
			want: []attribute.KeyValue{rank.Int64(7), world.Int64(8), local.Int64(3)},
		},
		{
			name: "k8s-index reads the rank only",
			from: detect.RankFromK8sIndex,
			env:  environ.Map{"JOB_COMPLETION_INDEX": "12", "WORLD_SIZE": "8", "LOCAL_RANK": "3"},
			want: []attribute.KeyValue{rank.Int64(12)},
		},
		{
			name: "strict integer rule: Python whitespace and a sign are accepted",
			from: detect.RankFromTorchrun,
			env:  environ.Map{"RANK": " +003\x1f", "WORLD_SIZE": "\u00a08\t", "LOCAL_RANK": "-0"},
			want: []attribute.KeyValue{rank.Int64(3), world.Int64(8), local.Int64(0)},
		},
		{
			name:     "strict integer rule: underscores, non-ASCII digits and int64 overflow are rejected",
			from:     detect.RankFromTorchrun,
			env:      environ.Map{"RANK": "1_0", "WORLD_SIZE": "\u0663", "LOCAL_RANK": "9223372036854775808"},
			warnings: []string{`RANK="1_0" is not a base-10 integer; nv.dl.rank not set`, `WORLD_SIZE="٣" is not a base-10 integer`, `LOCAL_RANK="9223372036854775808" is not a base-10 integer`},
		},
		{
			name:     "absent and empty variables warn, the rest is kept",
			from:     detect.RankFromSlurm,
			env:      environ.Map{"SLURM_NTASKS": "4", "SLURM_LOCALID": ""},
			want:     []attribute.KeyValue{world.Int64(4)},
			warnings: []string{"rank from slurm: SLURM_PROCID is not set; nv.dl.rank not set", "SLURM_LOCALID is not set; nv.dl.local_rank not set"},
		},
		{
			name:     "k8s-index without an index",
			from:     detect.RankFromK8sIndex,
			env:      environ.Map{"RANK": "1"},
			warnings: []string{"rank from k8s-index: JOB_COMPLETION_INDEX is not set"},
		},
		{
			name:     "unknown launcher",
			from:     "mpi",
			env:      environ.Map{"RANK": "1", "SLURM_PROCID": "1"},
			warnings: []string{`unknown rank source "mpi" (want slurm, torchrun, k8s-index)`},
		},
		{
			name:     "launcher names are case-sensitive",
			from:     "Slurm",
			env:      environ.Map{"SLURM_PROCID": "1"},
			warnings: []string{`unknown rank source "Slurm"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, warnings := detect.Ranks(tt.env, tt.from)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Ranks(%q) = %v, want %v", tt.from, got, tt.want)
			}
			if len(warnings) != len(tt.warnings) {
				t.Fatalf("Ranks(%q) warnings = %q, want %d", tt.from, warnings, len(tt.warnings))
			}
			for i, w := range tt.warnings {
				if !strings.Contains(warnings[i], w) {
					t.Errorf("warning %d = %q, want it to contain %q", i, warnings[i], w)
				}
			}
		})
	}
}

func TestRankSources(t *testing.T) {
	t.Parallel()
	want := []string{"slurm", "torchrun", "k8s-index"}
	if got := detect.RankSources(); !slices.Equal(got, want) {
		t.Errorf("RankSources() = %q, want %q", got, want)
	}
	for _, from := range want {
		if !detect.ValidRankFrom(from) {
			t.Errorf("ValidRankFrom(%q) = false", from)
		}
	}
	for _, from := range []string{"", "SLURM", "torch", "k8s", "k8s_index", " slurm"} {
		if detect.ValidRankFrom(from) {
			t.Errorf("ValidRankFrom(%q) = true", from)
		}
	}
}
