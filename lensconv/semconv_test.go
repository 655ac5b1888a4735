package lensconv_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/nemolens/lens-go/lensconv"
)

func TestListSizesAndOrder(t *testing.T) {
	cases := []struct {
		name string
		keys []string
		n    int
		is   func(string) bool
	}{
		{"SlurmKeys", lensconv.SlurmKeys(), 21, lensconv.IsSlurmKey},
		{"SlurmIntegerKeys", lensconv.SlurmIntegerKeys(), 4, lensconv.IsSlurmIntegerKey},
		{"InheritedKeys", lensconv.InheritedKeys(), 23, lensconv.IsInheritedKey},
		{"RetiredSlurmKeys", lensconv.RetiredSlurmKeys(), 3, lensconv.IsRetiredSlurmKey},
		{"IntegerKeys", lensconv.IntegerKeys(), 14, lensconv.IsIntegerKey},
		{"StringKeys", lensconv.StringKeys(), 14, lensconv.IsStringKey},
		{"LocalKeys", lensconv.LocalKeys(), 3, lensconv.IsLocalKey},
		{"KubernetesKeys", lensconv.KubernetesKeys(), 6, nil},
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
	if got := lensconv.SlurmKeys(); !slices.Equal(got, want) {
		t.Errorf("SlurmKeys() = %v", got)
	}
	inh := lensconv.InheritedKeys()
	if !slices.Equal(inh[:21], want) || inh[21] != "nv.dl.job.uuid" || inh[22] != "nv.dl.run.uuid" {
		t.Errorf("InheritedKeys() = %v", inh)
	}
}

func TestFreshSlices(t *testing.T) {
	for name, f := range map[string]func() []string{
		"SlurmKeys": lensconv.SlurmKeys, "SlurmIntegerKeys": lensconv.SlurmIntegerKeys,
		"InheritedKeys": lensconv.InheritedKeys, "RetiredSlurmKeys": lensconv.RetiredSlurmKeys,
		"IntegerKeys": lensconv.IntegerKeys, "StringKeys": lensconv.StringKeys,
		"LocalKeys": lensconv.LocalKeys, "KubernetesKeys": lensconv.KubernetesKeys,
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
		t   lensconv.Type
		ok  bool
	}{
		{lensconv.SlurmNNodes, lensconv.TypeInt, true},
		{lensconv.SlurmJobID, lensconv.TypeString, true},
		{lensconv.NVDLJobUUID, lensconv.TypeString, true},
		{lensconv.NVDLRunUUID, lensconv.TypeString, true},
		{lensconv.NVDLRank, lensconv.TypeInt, true},
		{lensconv.NVGPUMemoryTotal, lensconv.TypeInt, true},
		{lensconv.NVGPUComputeCapability, lensconv.TypeString, true},
		{lensconv.NVDLSoftwareTorch, lensconv.TypeString, true},
		{lensconv.SlurmNodelist, 0, false},
		{"example.id", 0, false},
		{lensconv.HostName, 0, false},
	}
	for _, c := range cases {
		got, ok := lensconv.TypeOf(c.key)
		if got != c.t || ok != c.ok {
			t.Errorf("TypeOf(%q) = %v, %v; want %v, %v", c.key, got, ok, c.t, c.ok)
		}
	}
	if lensconv.TypeInt.String() != "int" || lensconv.TypeString.String() != "string" || lensconv.Type(9).String() != "Type(9)" {
		t.Error("Type.String")
	}
}

func ExampleInheritedKeys() {
	keys := lensconv.InheritedKeys()
	fmt.Println(len(keys), keys[0], keys[len(keys)-1])
	fmt.Println(lensconv.IsInheritedKey("slurm.nodelist"), lensconv.IsRetiredSlurmKey("slurm.nodelist"))
	// Output:
	// 23 slurm.job.id nv.dl.run.uuid
	// false true
}

func ExampleTypeOf() {
	for _, k := range []string{lensconv.NVDLRank, lensconv.SlurmJobName, "example.id"} {
		t, ok := lensconv.TypeOf(k)
		fmt.Println(k, t, ok)
	}
	// Output:
	// nv.dl.rank int true
	// slurm.job.name string true
	// example.id Type(0) false
}
