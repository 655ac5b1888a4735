package detect

import (
	"testing"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/internal/pytext"
	"github.com/nemolens/lens-go/internal/testvectors"
	"github.com/nemolens/lens-go/lensconv"
)

func TestVectorsMerge(t *testing.T) {
	vs, err := testvectors.ByOp("merge")
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) == 0 {
		t.Fatal("no merge vectors")
	}
	for _, v := range vs {
		t.Run(v.ID, func(t *testing.T) {
			want, err := v.ExpectedMap()
			if err != nil {
				t.Fatal(err)
			}
			base, additions := v.Base.M.Clone(), v.Additions.M.Clone()
			got := merge(v.Base.M, v.Additions.M, v.Overwrite)
			if !got.Equal(want) {
				t.Errorf("merge(%v, %v, %v)\n got %v\nwant %v", v.Base.M, v.Additions.M, v.Overwrite, got, want)
			}
			if !v.Base.M.Equal(base) || !v.Additions.M.Equal(additions) {
				t.Error("merge modified its inputs")
			}
		})
	}
}

func mapOf(kv ...string) *attr.Map { return attr.FromStrings(kv...) }

// FuzzInheritedValues checks that the allowlist-only carrier scan agrees
// with carrier.Parse followed by filtering (same keys, order and values).
func FuzzInheritedValues(f *testing.F) {
	for _, op := range []string{"detect_slurm", "parse"} {
		vs, err := testvectors.ByOp(op)
		if err != nil {
			f.Fatal(err)
		}
		for _, v := range vs {
			if text, ok := v.Env["OTEL_RESOURCE_ATTRIBUTES"]; ok {
				f.Add(text)
			}
			if text, _, err := v.Text(); err == nil {
				f.Add(text)
			}
		}
	}
	f.Add("slurm.job.id=a,slurm.nnodes=x,slurm.job.id=,slurm.job.id=b, slurm.ntasks = %2B4 ,nv.dl.run.uuid=r")
	f.Fuzz(func(t *testing.T, text string) {
		got, rejected := inheritedValues(nil, text)
		want := &attr.Map{}
		nRejected := 0
		for k, v := range carrier.Parse(text).All() {
			if !lensconv.IsInheritedKey(k) {
				continue
			}
			s := v.AsString()
			if s == "" {
				nRejected++
				continue
			}
			if lensconv.IsSlurmIntegerKey(k) {
				n, err := pytext.ParseInt(s)
				if err != nil {
					nRejected++
					continue
				}
				v = attr.Int64(n)
			}
			want.Set(k, v)
		}
		if g := attr.NewMap(got...); !g.Equal(want) {
			t.Errorf("inheritedValues(%q)\n got %v\nwant %v", text, g, want)
		}
		if len(rejected) != nRejected {
			t.Errorf("%d rejections, want %d", len(rejected), nRejected)
		}
		if !mayHoldInherited(text) && want.Len()+nRejected > 0 {
			t.Errorf("mayHoldInherited(%q) = false", text)
		}
	})
}

func TestMergeOverwrite(t *testing.T) {
	base := mapOf("a", "1", "b", "", "c", "3")
	add := mapOf("a", "x", "b", "y", "d", "", "e", "5")
	if got, want := merge(base, add, true), mapOf("a", "x", "c", "3", "b", "y", "e", "5"); !got.Equal(want) {
		t.Errorf("overwrite: got %v, want %v", got, want)
	}
	if got, want := merge(base, add, false), mapOf("a", "1", "c", "3", "b", "y", "e", "5"); !got.Equal(want) {
		t.Errorf("no overwrite: got %v, want %v", got, want)
	}
	if got := merge(nil, nil, false); got.Len() != 0 {
		t.Errorf("nil inputs: %v", got)
	}
}
