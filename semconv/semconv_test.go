package semconv_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/nemolens/lens-go/semconv"
)

func TestListSizesAndOrder(t *testing.T) {
	cases := []struct {
		name string
		keys []string
		n    int
		is   func(string) bool
	}{
		{"SlurmKeys", semconv.SlurmKeys(), 21, semconv.IsSlurmKey},
		{"SlurmIntegerKeys", semconv.SlurmIntegerKeys(), 4, semconv.IsSlurmIntegerKey},
		{"InheritedKeys", semconv.InheritedKeys(), 23, semconv.IsInheritedKey},
		{"RetiredSlurmKeys", semconv.RetiredSlurmKeys(), 3, semconv.IsRetiredSlurmKey},
		{"IntegerKeys", semconv.IntegerKeys(), 14, semconv.IsIntegerKey},
		{"StringKeys", semconv.StringKeys(), 14, semconv.IsStringKey},
		{"LocalKeys", semconv.LocalKeys(), 3, semconv.IsLocalKey},
		{"KubernetesKeys", semconv.KubernetesKeys(), 6, nil},
	}
	all := map[string]bool{}
	for _, c := range cases {
		for _, k := range c.keys {
			all[k] = true
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if len(c.keys) != c.n {
				t.Errorf("len = %d, want %d", len(c.keys), c.n)
			}
			seen := map[string]bool{}
			for _, k := range c.keys {
				if seen[k] {
					t.Errorf("duplicate %q", k)
				}
				seen[k] = true
			}
			if c.is == nil {
				return
			}
			for k := range all {
				if got := c.is(k); got != seen[k] {
					t.Errorf("predicate(%q) = %v, want %v", k, got, seen[k])
				}
			}
		})
	}
}

func TestEmissionOrder(t *testing.T) {
	want := []string{
		"slurm.job.id", "slurm.job.id.raw", "slurm.array.job_id", "slurm.array.task_id",
		"slurm.array.count", "slurm.sluid", "slurm.array.sluid", "slurm.job.name",
		"slurm.cluster.name", "slurm.partition", "slurm.nnodes", "slurm.ntasks",
		"slurm.restart_count", "slurm.job.user", "slurm.job.account", "slurm.job.qos",
		"slurm.job.reservation", "slurm.segment", "slurm.topology.addr",
		"slurm.topology.addr_pattern", "slurm.head_node.name",
	}
	if got := semconv.SlurmKeys(); !slices.Equal(got, want) {
		t.Errorf("SlurmKeys() = %v", got)
	}
	inh := semconv.InheritedKeys()
	if !slices.Equal(inh[:21], want) || inh[21] != "nv.dl.job.uuid" || inh[22] != "nv.dl.run.uuid" {
		t.Errorf("InheritedKeys() = %v", inh)
	}
}

func TestFreshSlices(t *testing.T) {
	for name, f := range map[string]func() []string{
		"SlurmKeys": semconv.SlurmKeys, "SlurmIntegerKeys": semconv.SlurmIntegerKeys,
		"InheritedKeys": semconv.InheritedKeys, "RetiredSlurmKeys": semconv.RetiredSlurmKeys,
		"IntegerKeys": semconv.IntegerKeys, "StringKeys": semconv.StringKeys,
		"LocalKeys": semconv.LocalKeys, "KubernetesKeys": semconv.KubernetesKeys,
	} {
		a := f()
		orig := a[0]
		a[0] = "mutated"
		if b := f(); b[0] != orig {
			t.Errorf("%s: mutation of a returned slice leaked: %q", name, b[0])
		}
	}
}

func TestTypeOf(t *testing.T) {
	cases := []struct {
		key string
		t   semconv.Type
		ok  bool
	}{
		{semconv.SlurmNNodes, semconv.TypeInt, true},
		{semconv.SlurmJobID, semconv.TypeString, true},
		{semconv.NVDLJobUUID, semconv.TypeString, true},
		{semconv.NVDLRunUUID, semconv.TypeString, true},
		{semconv.NVDLRank, semconv.TypeInt, true},
		{semconv.NVGPUMemoryTotal, semconv.TypeInt, true},
		{semconv.NVGPUComputeCapability, semconv.TypeString, true},
		{semconv.NVDLSoftwareTorch, semconv.TypeString, true},
		{semconv.SlurmNodelist, 0, false},
		{"example.id", 0, false},
		{semconv.HostName, 0, false},
	}
	for _, c := range cases {
		got, ok := semconv.TypeOf(c.key)
		if got != c.t || ok != c.ok {
			t.Errorf("TypeOf(%q) = %v, %v; want %v, %v", c.key, got, ok, c.t, c.ok)
		}
	}
	if semconv.TypeInt.String() != "int" || semconv.TypeString.String() != "string" || semconv.Type(9).String() != "Type(9)" {
		t.Error("Type.String")
	}
}

func ExampleInheritedKeys() {
	keys := semconv.InheritedKeys()
	fmt.Println(len(keys), keys[0], keys[len(keys)-1])
	fmt.Println(semconv.IsInheritedKey("slurm.nodelist"), semconv.IsRetiredSlurmKey("slurm.nodelist"))
	// Output:
	// 23 slurm.job.id nv.dl.run.uuid
	// false true
}

func ExampleTypeOf() {
	for _, k := range []string{semconv.NVDLRank, semconv.SlurmJobName, "example.id"} {
		t, ok := semconv.TypeOf(k)
		fmt.Println(k, t, ok)
	}
	// Output:
	// nv.dl.rank int true
	// slurm.job.name string true
	// example.id Type(0) false
}
