package carrier_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/internal/process"
)

const (
	carrierPrefix = carrier.EnvVar + "="
	runIDPrefix   = "NEMO_LENS_RUN_ID="
)

func TestChildEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		environ     []string
		def, ovr    *attr.Map
		want        []string
		wantDropped int
	}{{
		name:    "all duplicates replaced, the last one is current",
		environ: []string{"A=1", carrierPrefix + "a=1,x=1", "B=2", carrierPrefix + "b=2", "C=3", runIDPrefix + "r"},
		ovr:     rank(4),
		want:    []string{"A=1", "B=2", "C=3", runIDPrefix + "r", carrierPrefix + "b=2,nv.dl.rank=4"},
	}, {
		name:    "no carrier, nothing to add: still set, empty; the run id comes from SLURM_JOB_ID",
		environ: []string{"PATH=/bin", "SLURM_JOB_ID=77"},
		want:    []string{"PATH=/bin", "SLURM_JOB_ID=77", runIDPrefix + "77", carrierPrefix},
	}, {
		name:    "then from TORCHELASTIC_RUN_ID",
		environ: []string{"TORCHELASTIC_RUN_ID=rdzv-9"},
		want:    []string{"TORCHELASTIC_RUN_ID=rdzv-9", runIDPrefix + "rdzv-9", carrierPrefix},
	}, {
		name:    "an empty run id is replaced, a blank one too",
		environ: []string{runIDPrefix + " \t", "SLURM_JOB_ID=5"},
		want:    []string{"SLURM_JOB_ID=5", runIDPrefix + "5", carrierPrefix},
	}, {
		name:    "null override hides the only key: set, empty",
		environ: []string{carrierPrefix + "a=1", runIDPrefix + "r"},
		ovr:     attr.NewMap(attr.Entry{Key: "a", Value: attr.Null()}),
		want:    []string{runIDPrefix + "r", carrierPrefix},
	}, {
		name:        "defaults under the current carrier",
		environ:     []string{carrierPrefix + " nv.dl.rank= , junk", "HOME=/h", runIDPrefix + "r"},
		def:         attr.NewMap(attr.Entry{Key: "nv.dl.rank", Value: attr.Int(5)}, attr.Entry{Key: "nv.dl.role", Value: attr.String("w,x")}),
		ovr:         attr.FromStrings("bad=key", "v"),
		want:        []string{"HOME=/h", runIDPrefix + "r", carrierPrefix + "nv.dl.rank=,nv.dl.role=w%2Cx"},
		wantDropped: 1,
	}, {
		name:    "look-alike names are not the carrier",
		environ: []string{carrier.EnvVar + "_X=a=1", "X" + carrierPrefix + "b=2", carrier.EnvVar, carrierPrefix + "c=3", runIDPrefix + "r"},
		want:    []string{carrier.EnvVar + "_X=a=1", "X" + carrierPrefix + "b=2", carrier.EnvVar, runIDPrefix + "r", carrierPrefix + "c=3"},
	}, {
		name:    "empty, non-nil environ",
		environ: []string{runIDPrefix + "r"},
		ovr:     attr.FromStrings("k", "v"),
		want:    []string{runIDPrefix + "r", carrierPrefix + "k=v"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.environ)
			got, err := carrier.ChildEnv(context.Background(), tt.ovr, carrier.WithEnviron(in), carrier.WithDefaults(tt.def))
			if !slices.Equal(got, tt.want) {
				t.Errorf("ChildEnv =\n %q\nwant\n %q", got, tt.want)
			}
			if n := countDropped(err); n != tt.wantDropped || (n == 0) != (err == nil) {
				t.Errorf("err = %v, want %d dropped entries", err, tt.wantDropped)
			}
			if tt.wantDropped > 0 && !errors.Is(err, carrier.ErrKeyNotCarried) {
				t.Errorf("err = %v, want errors.Is ErrKeyNotCarried", err)
			}
			if !slices.Equal(in, tt.environ) {
				t.Errorf("ChildEnv modified its input: %q", in)
			}
		})
	}
}

// countDropped counts the Dropped entries joined in err.
func countDropped(err error) int {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		if errors.As(err, new(carrier.Dropped)) {
			return 1
		}
		return 0
	}
	n := 0
	for _, e := range j.Unwrap() {
		if errors.As(e, new(carrier.Dropped)) {
			n++
		}
	}
	return n
}

// TestChildEnvRandomRunID: without any run id source, every child of this
// process gets the same random run id, this process's.
func TestChildEnvRandomRunID(t *testing.T) {
	t.Parallel()
	var ids []string
	for range 3 {
		got, err := carrier.ChildEnv(context.Background(), rank(1), carrier.WithEnviron([]string{"PATH=/bin"}))
		if err != nil {
			t.Fatal(err)
		}
		v, _ := lastValue(got, "NEMO_LENS_RUN_ID")
		ids = append(ids, v)
	}
	if ids[0] != process.RandomRunID() || ids[1] != ids[0] || ids[2] != ids[0] || len(ids[0]) != 12 {
		t.Errorf("run ids %q, want three times this process's random id %q", ids, process.RandomRunID())
	}
}

func lastValue(list []string, name string) (string, bool) {
	for i := len(list) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(list[i], name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// TestChildEnvTraceContext: the span context of ctx is written as
// TRACEPARENT (and TRACESTATE), replacing stale ones; without a span the
// inherited variables pass through.
func TestChildEnvTraceContext(t *testing.T) {
	t.Parallel()
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ts, _ := trace.ParseTraceState("k=v")
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, TraceState: ts})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)
	in := []string{"TRACEPARENT=00-11111111111111111111111111111111-2222222222222222-01", "TRACESTATE=stale=1", "BAGGAGE=b=1", runIDPrefix + "r"}

	got, err := carrier.ChildEnv(ctx, nil, carrier.WithEnviron(in), carrier.WithPropagator(propagation.TraceContext{}))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := lastValue(got, "TRACEPARENT"); v != "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" {
		t.Errorf("TRACEPARENT = %q", v)
	}
	if v, _ := lastValue(got, "TRACESTATE"); v != "k=v" {
		t.Errorf("TRACESTATE = %q", v)
	}
	if n := countName(got, "TRACEPARENT") + countName(got, "TRACESTATE"); n != 2 {
		t.Errorf("%d TRACEPARENT/TRACESTATE entries in %q, want one each", n, got)
	}
	if v, _ := lastValue(got, "BAGGAGE"); v != "b=1" {
		t.Errorf("BAGGAGE = %q; the TraceContext propagator does not own it, so it passes through", v)
	}

	// No span: the inherited context passes through unchanged.
	got, _ = carrier.ChildEnv(context.Background(), nil, carrier.WithEnviron(in))
	for _, kv := range in {
		if !slices.Contains(got, kv) {
			t.Errorf("without a span, %q was not passed through: %q", kv, got)
		}
	}
}

func countName(list []string, name string) int {
	n := 0
	for _, kv := range list {
		if strings.HasPrefix(kv, name+"=") {
			n++
		}
	}
	return n
}

// TestChildEnvTooLarge: a composed carrier that does not fit in an
// environment string falls back to the inherited one, or to none, and says
// so with ErrCarrierTooLarge; the child still starts.
func TestChildEnvTooLarge(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("MAX_ARG_STRLEN is Linux's limit")
	}
	t.Parallel()
	// 22,000 × "/:" re-encodes to 6 bytes per pair: 132,000 bytes.
	inherited := "nemo.run.id=" + strings.Repeat("/:", 22000)
	in := []string{carrierPrefix + inherited, runIDPrefix + "r"}
	got, err := carrier.ChildEnv(context.Background(), rank(1), carrier.WithEnviron(in))
	if !errors.Is(err, carrier.ErrCarrierTooLarge) {
		t.Fatalf("err = %v, want ErrCarrierTooLarge", err)
	}
	if v, _ := lastValue(got, carrier.EnvVar); v != inherited {
		t.Errorf("carrier = %.60q…, want the inherited one unchanged", v)
	}
	// An inherited carrier that is too large itself: no carrier at all.
	huge := "a=" + strings.Repeat("x", carrier.MaxEnvEntry)
	got, err = carrier.ChildEnv(context.Background(), nil, carrier.WithEnviron([]string{carrierPrefix + huge, runIDPrefix + "r"}))
	if !errors.Is(err, carrier.ErrCarrierTooLarge) {
		t.Fatalf("err = %v, want ErrCarrierTooLarge", err)
	}
	if _, ok := lastValue(got, carrier.EnvVar); ok {
		t.Errorf("a carrier that cannot be passed was kept")
	}
	// The boundary: a carrier of exactly MaxEnvEntry-1 bytes fits.
	exact := "k=" + strings.Repeat("x", carrier.MaxEnvEntry-1-len(carrierPrefix)-2)
	got, err = carrier.ChildEnv(context.Background(), nil, carrier.WithEnviron([]string{carrierPrefix + exact, runIDPrefix + "r"}))
	if err != nil {
		t.Fatalf("a carrier of the largest size that fits: %v", err)
	}
	if v, _ := lastValue(got, carrier.EnvVar); v != exact {
		t.Errorf("the largest carrier that fits was not kept")
	}
	// And the child really starts with it.
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("cannot find the test binary: %v", err)
	}
	cmd := exec.Command(exe, "-test.run=^TestHelperProcess$")
	cmd.Env = append(got, "LENS_GO_HELPER_PROCESS=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child with the largest carrier: %v\n%.200s", err, out)
	}
}

// TestChildEnvProcessEnv: without WithEnviron the environment is
// os.Environ(), and the process environment is never modified. Not
// parallel: it sets process variables.
func TestChildEnvProcessEnv(t *testing.T) {
	t.Setenv(carrier.EnvVar, "parent=1")
	t.Setenv("LENS_GO_CHILDENV_TEST", "present")
	t.Setenv("NEMO_LENS_RUN_ID", "run-from-env")
	before := os.Environ()
	got, err := carrier.ChildEnv(context.Background(), attr.FromStrings("child", "2"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got, "LENS_GO_CHILDENV_TEST=present") || !slices.Contains(got, "NEMO_LENS_RUN_ID=run-from-env") {
		t.Errorf("ChildEnv lacks the process variables: %q", got)
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
		t.Errorf("ChildEnv has %d entries, os.Environ() %d", len(got), len(before))
	}
	if after := os.Environ(); !slices.Equal(after, before) {
		t.Errorf("the process environment changed")
	}
}

// TestChildEnvInstanceID: a child that would report this process's own
// service.instance.id gets an explicit one derived from it; other children
// are left alone. Not parallel: it sets the process identity.
func TestChildEnvInstanceID(t *testing.T) {
	restore := process.SetIdentity(process.Identity{RunID: "run1", InstanceID: "run1-rank3"})
	defer restore()
	base := []string{runIDPrefix + "run1", carrierPrefix + "nv.dl.rank=3"}
	id := func(got []string) string {
		v, _ := lastValue(got, carrier.EnvVar)
		s, _ := carrier.Parse(v).Get("service.instance.id")
		return s.AsString()
	}
	// Same rank (inherited, even written "+03"), same run: a new id each time.
	first, _ := carrier.ChildEnv(context.Background(), nil, carrier.WithEnviron(base))
	second, _ := carrier.ChildEnv(context.Background(), attr.FromStrings("nv.dl.rank", "+03"), carrier.WithEnviron(base))
	a, b := id(first), id(second)
	if !strings.HasPrefix(a, "run1-rank3.") || !strings.HasPrefix(b, "run1-rank3.") || a == b {
		t.Errorf("children of run1-rank3 got %q and %q, want distinct run1-rank3.<n>", a, b)
	}
	// Another rank, or another run: no explicit id.
	if got, _ := carrier.ChildEnv(context.Background(), rank(4), carrier.WithEnviron(base)); id(got) != "" {
		t.Errorf("rank 4 child got service.instance.id %q, want none", id(got))
	}
	if got, _ := carrier.ChildEnv(context.Background(), nil, carrier.WithEnviron([]string{runIDPrefix + "other", carrierPrefix + "nv.dl.rank=3"})); id(got) != "" {
		t.Errorf("child of another run got service.instance.id %q, want none", id(got))
	}
	// An inherited explicit id equal to ours is replaced too.
	got, _ := carrier.ChildEnv(context.Background(), nil, carrier.WithEnviron([]string{carrierPrefix + "service.instance.id=run1-rank3"}))
	if c := id(got); !strings.HasPrefix(c, "run1-rank3.") {
		t.Errorf("child inheriting our explicit id got %q", c)
	}
	// The run id handed down is the identity's.
	if v, _ := lastValue(got, "NEMO_LENS_RUN_ID"); v != "run1" {
		t.Errorf("run id %q, want the identity's run1", v)
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
	env, err := carrier.ChildEnv(context.Background(), attr.FromStrings("nv.dl.role", "worker,1"), carrier.WithEnviron(environ))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	want := fmt.Sprintf(`carrier="nemo.run.id=exp%%2F1,nv.dl.role=worker%%2C1" parsed={nemo.run.id="exp/1", nv.dl.role="worker,1"} run=%q`, process.RandomRunID())
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
	fmt.Printf("carrier=%q parsed=%v run=%q\n", v, carrier.Get(nil), os.Getenv("NEMO_LENS_RUN_ID"))
}

// TestChildEnvDrawnRunID pins docs/resource.md#run-id-launcher: a random run
// id goes down marked with NEMO_LENS_RUN_ID_DRAWN, an inherited marked one
// is kept (and stays marked) unless a launcher id outranks it, and a marker
// that does not hold the run id handed down is dropped.
func TestChildEnvDrawnRunID(t *testing.T) {
	t.Parallel()
	const drawnPrefix = "NEMO_LENS_RUN_ID_DRAWN="
	r := process.RandomRunID()
	tests := []struct {
		name    string
		environ []string
		want    []string
	}{{
		name:    "this process's random id, marked",
		environ: []string{"PATH=/bin"},
		want:    []string{"PATH=/bin", runIDPrefix + r, drawnPrefix + r, carrierPrefix},
	}, {
		name:    "an inherited marked id without a launcher id: kept, still marked",
		environ: []string{drawnPrefix + "d1", "PATH=/bin", runIDPrefix + "d1"},
		want:    []string{"PATH=/bin", runIDPrefix + "d1", drawnPrefix + "d1", carrierPrefix},
	}, {
		name:    "an inherited marked id yields to TORCHELASTIC_RUN_ID, unmarked",
		environ: []string{runIDPrefix + "d1", drawnPrefix + "d1", "TORCHELASTIC_RUN_ID=JOBX"},
		want:    []string{"TORCHELASTIC_RUN_ID=JOBX", runIDPrefix + "JOBX", carrierPrefix},
	}, {
		name:    "an inherited marked id yields to an MPI job id",
		environ: []string{runIDPrefix + "d1", drawnPrefix + "d1", "PMIX_NAMESPACE=445054977"},
		want:    []string{"PMIX_NAMESPACE=445054977", runIDPrefix + "445054977", carrierPrefix},
	}, {
		name:    "a user's id is never outranked; a stale marker is dropped",
		environ: []string{runIDPrefix + "abc", drawnPrefix + "d1", "TORCHELASTIC_RUN_ID=JOBX"},
		want:    []string{runIDPrefix + "abc", "TORCHELASTIC_RUN_ID=JOBX", carrierPrefix},
	}, {
		name:    "a launcher id is not marked",
		environ: []string{"SLURM_JOB_ID=42"},
		want:    []string{"SLURM_JOB_ID=42", runIDPrefix + "42", carrierPrefix},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := carrier.ChildEnv(context.Background(), nil, carrier.WithEnviron(tt.environ))
			if err != nil {
				t.Fatal(err)
			}
			// The order of the entries is TestChildEnv's to pin.
			if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(tt.want))) {
				t.Errorf("ChildEnv =\n %q\nwant\n %q", got, tt.want)
			}
		})
	}
}
