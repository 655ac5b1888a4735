package carrier_test

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
)

const carrierPrefix = carrier.EnvVar + "="

func TestChildEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		environ    []string
		def, ovr   *attr.Map
		want       []string
		wantDroped int
	}{{
		name:    "all duplicates replaced, the last one is current",
		environ: []string{"A=1", carrierPrefix + "a=1,x=1", "B=2", carrierPrefix + "b=2", "C=3"},
		ovr:     rank(4),
		want:    []string{"A=1", "B=2", "C=3", carrierPrefix + "b=2,nv.dl.rank=4"},
	}, {
		name:    "no carrier, nothing to add: still set, empty",
		environ: []string{"PATH=/bin"},
		want:    []string{"PATH=/bin", carrierPrefix},
	}, {
		name:    "null override hides the only key: set, empty",
		environ: []string{carrierPrefix + "a=1"},
		ovr:     attr.NewMap(attr.Entry{Key: "a", Value: attr.Null()}),
		want:    []string{carrierPrefix},
	}, {
		name:       "defaults under the current carrier",
		environ:    []string{carrierPrefix + " nv.dl.rank= , junk", "HOME=/h"},
		def:        attr.NewMap(attr.Entry{Key: "nv.dl.rank", Value: attr.Int(5)}, attr.Entry{Key: "nv.dl.role", Value: attr.String("w,x")}),
		ovr:        attr.FromStrings("bad=key", "v"),
		want:       []string{"HOME=/h", carrierPrefix + "nv.dl.rank=,nv.dl.role=w%2Cx"},
		wantDroped: 1,
	}, {
		name:    "look-alike names are not the carrier",
		environ: []string{carrier.EnvVar + "_X=a=1", "X" + carrierPrefix + "b=2", carrier.EnvVar, carrierPrefix + "c=3"},
		want:    []string{carrier.EnvVar + "_X=a=1", "X" + carrierPrefix + "b=2", carrier.EnvVar, carrierPrefix + "c=3"},
	}, {
		name:    "empty, non-nil environ",
		environ: []string{},
		ovr:     attr.FromStrings("k", "v"),
		want:    []string{carrierPrefix + "k=v"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.environ)
			got, dropped := carrier.ChildEnv(in, tt.def, tt.ovr)
			if !slices.Equal(got, tt.want) {
				t.Errorf("ChildEnv =\n %q\nwant\n %q", got, tt.want)
			}
			if len(dropped) != tt.wantDroped {
				t.Errorf("dropped = %v", dropped)
			}
			if !slices.Equal(in, tt.environ) {
				t.Errorf("ChildEnv modified its input: %q", in)
			}
		})
	}
}

// TestChildEnvProcessEnv: a nil environ is os.Environ(), and the process
// environment is never modified. Not parallel: it sets process variables.
func TestChildEnvProcessEnv(t *testing.T) {
	t.Setenv(carrier.EnvVar, "parent=1")
	t.Setenv("LENS_GO_CHILDENV_TEST", "present")
	before := os.Environ()
	got, _ := carrier.ChildEnv(nil, nil, attr.FromStrings("child", "2"))
	if !slices.Contains(got, "LENS_GO_CHILDENV_TEST=present") {
		t.Errorf("ChildEnv(nil) lacks the process variables: %q", got)
	}
	var carriers []string
	for _, kv := range got {
		if strings.HasPrefix(kv, carrierPrefix) {
			carriers = append(carriers, kv)
		}
	}
	if !slices.Equal(carriers, []string{carrierPrefix + "parent=1,child=2"}) {
		t.Errorf("carrier entries = %q", carriers)
	}
	if len(got) != len(before) {
		t.Errorf("ChildEnv(nil) has %d entries, os.Environ() %d", len(got), len(before))
	}
	if after := os.Environ(); !slices.Equal(after, before) {
		t.Errorf("the process environment changed")
	}
}

// TestChildEnvExec starts a real child (this test binary) with cmd.Env from
// ChildEnv and checks what the child sees, duplicates included.
func TestChildEnvExec(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("cannot find the test binary: %v", err)
	}
	environ := []string{
		"LENS_GO_HELPER_PROCESS=1",
		carrierPrefix + "stale=1",
		carrierPrefix + "nemo.run.id=exp%2F1",
	}
	cmd := exec.Command(exe, "-test.run=^TestHelperProcess$")
	env, _ := carrier.ChildEnv(environ, nil, attr.FromStrings("nv.dl.role", "worker,1"))
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	const want = `carrier="nemo.run.id=exp%2F1,nv.dl.role=worker%2C1" parsed={nemo.run.id="exp/1", nv.dl.role="worker,1"}`
	if !strings.Contains(string(out), want) {
		t.Errorf("child printed %q, want %q", out, want)
	}
}

// TestHelperProcess is the child of TestChildEnvExec; it does nothing in a
// normal test run.
func TestHelperProcess(t *testing.T) {
	if os.Getenv("LENS_GO_HELPER_PROCESS") != "1" {
		t.Skip("helper process for TestChildEnvExec; runs only as its child")
	}
	v, ok := os.LookupEnv(carrier.EnvVar)
	if !ok {
		t.Fatal("carrier absent")
	}
	fmt.Printf("carrier=%q parsed=%v\n", v, carrier.Get(nil))
}
