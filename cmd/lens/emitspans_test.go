//go:build unix

package main

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/nemolens/lens-go/completed"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/collectortest"
)

// emitRow is one lens emit-spans invocation: its --span values (each
// given as --span VALUE), other arguments, extra environment, and the
// expected exit status and stderr fragments. A row that exits 0 must have
// exported exactly its spans; any other must have exported nothing.
type emitRow struct {
	name   string
	specs  []string
	args   []string
	env    environ.Map
	code   int
	stderr []string
}

// emitRows cover every rule of docs/tracing.md#emit-spans; they also seed
// FuzzEmitSpans.
var emitRows = []emitRow{
	{name: "one span", specs: []string{"job,1700000000,1700000100"}},
	{name: "parent after child, not containing it", specs: []string{"queue,1699999000.5,1700000000,job", "job,1700000000,1700000100"}},
	{name: "three levels", specs: []string{"c,3,4,b", "a,1,9", "b,2,8,a"}},
	{name: "zero length, nanoseconds", specs: []string{"mark,1700000000.123456789,1700000000.123456789"}},

	{name: "no --span", code: 2, stderr: []string{"lens emit-spans: no --span given"}},
	{name: "extra argument", specs: []string{"a,1,2"}, args: []string{"x"}, code: 2, stderr: []string{`unexpected argument "x"`}},
	{name: "empty --service", specs: []string{"a,1,2"}, args: []string{"--service="}, code: 2, stderr: []string{"--service must not be empty"}},
	{name: "two fields", specs: []string{"a,1"}, code: 2, stderr: []string{`--span "a,1": malformed span: 2 fields`}},
	{name: "five fields", specs: []string{"a,1,2,b,c"}, code: 2, stderr: []string{"malformed span: 5 fields"}},
	{name: "empty parent field", specs: []string{"a,1,2,"}, code: 2, stderr: []string{"empty parent name"}},
	{name: "time not a number", specs: []string{"a,1,soon"}, code: 2, stderr: []string{`end: malformed span: "soon" is not a decimal number`}},
	{name: "empty name", specs: []string{",1,2"}, code: 2, stderr: []string{`span "" (#1): empty span name`}},
	{name: "duplicate name", specs: []string{"a,1,2", "a,1,3"}, code: 2, stderr: []string{`span "a" (#2): duplicate span name: also span #1`}},
	{name: "missing parent", specs: []string{"a,1,2,ghost"}, code: 2, stderr: []string{`span "a" (#1): missing parent "ghost"`}},
	{name: "cycle", specs: []string{"a,1,2,b", "b,1,2,a", "c,1,2"}, code: 2, stderr: []string{`span "a" (#1): parent cycle: "a" -> "b" -> "a"`}},
	{name: "self parent", specs: []string{"a,1,2,a"}, code: 2, stderr: []string{`parent cycle: "a" -> "a"`}},
	{name: "infinite start", specs: []string{"a,inf,2"}, code: 2, stderr: []string{`start: time is not finite: "inf"`}},
	{name: "nan end", specs: []string{"a,1,nan"}, code: 2, stderr: []string{`end: time is not finite: "nan"`}},
	{name: "negative time", specs: []string{"a,-5,2"}, code: 2, stderr: []string{"time out of range"}},
	{name: "end before start", specs: []string{"a,1700000100,1700000000"}, code: 2, stderr: []string{`span "a" (#1): end before start: ends 1m40s before its start`}},
	{name: "one bad among good: nothing", specs: []string{"job,1,100", "ok,2,3,job", "bad,5,4,job"}, code: 2, stderr: []string{`span "bad" (#3): end before start`, "1 problem(s); nothing exported"}},
	{name: "every problem printed", specs: []string{"a,1,2", "a,1,2", "b,x,2", "c,1,2,b", "d,3,2"}, code: 2,
		stderr: []string{`span "a" (#2): duplicate`, `--span "b,x,2"`, `span "d" (#5): end before start`, "3 problem(s); nothing exported"}},

	{name: "traces disabled", specs: []string{"a,1,2"}, env: environ.Map{"NEMO_LENS_TRACES_ENABLED": "false"}, code: 1, stderr: []string{"NEMO_LENS_TRACES_ENABLED is false"}},
	{name: "exporter none", specs: []string{"a,1,2"}, env: environ.Map{"OTEL_TRACES_EXPORTER": "none"}, code: 1, stderr: []string{"exporter is none"}},
	{name: "SDK disabled", specs: []string{"a,1,2"}, env: environ.Map{"OTEL_SDK_DISABLED": "true"}, code: 1, stderr: []string{"OTEL_SDK_DISABLED is true"}},
	{name: "bad configuration", specs: []string{"a,1,2"}, env: environ.Map{"NEMO_LENS_EXPORTER": "carrier-pigeon"}, code: 1, stderr: []string{"configuration:", "carrier-pigeon"}},
	{name: "bad per-attempt switch", specs: []string{"a,1,2"}, env: environ.Map{"NEMO_LENS_TRACE_PER_ATTEMPT": "perhaps"}, code: 1, stderr: []string{"NEMO_LENS_TRACE_PER_ATTEMPT"}},
}

// emitConsole runs lens emit-spans in-process with the console exporter
// (stderr) and the given rows' values.
func emitConsole(t *testing.T, row emitRow) (result, []consoleSpan) {
	t.Helper()
	env := environ.Map{"NEMO_LENS_EXPORTER": "console"}
	maps.Copy(env, row.env)
	args := []string{"emit-spans"}
	for _, s := range row.specs {
		args = append(args, "--span", s)
	}
	args = append(args, row.args...)
	r := runIn(t, env, "", args...)
	return r, consoleSpans(t, r.stderr)
}

func TestEmitSpans(t *testing.T) {
	t.Parallel()
	for _, row := range emitRows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			r, spans := emitConsole(t, row)
			if r.code != row.code {
				t.Errorf("exit %d, want %d\n%v", r.code, row.code, r)
			}
			for _, s := range row.stderr {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q\n%v", s, r)
				}
			}
			if r.code != 0 {
				if len(spans) != 0 {
					t.Errorf("failed, yet %d spans exported", len(spans))
				}
				return
			}
			checkConsoleSpans(t, row.specs, spans)
		})
	}
}

// checkConsoleSpans: the exported spans are exactly the specs' spans, with
// their times (the specs' decimal text read independently, through
// time.Parse of an RFC 3339 rendering, below) and their parents.
func checkConsoleSpans(t *testing.T, specs []string, spans []consoleSpan) {
	t.Helper()
	if len(spans) != len(specs) {
		t.Fatalf("%d spans exported, want %d", len(spans), len(specs))
	}
	byName := map[string]consoleSpan{}
	for _, s := range spans {
		byName[s.Name] = s
	}
	for _, spec := range specs {
		f := strings.Split(spec, ",")
		s, ok := byName[f[0]]
		if !ok {
			t.Errorf("span %q not exported", f[0])
			continue
		}
		if got, want := s.StartTime, epochText(t, f[1]); !got.Equal(want) {
			t.Errorf("%s: start %v, want %v", f[0], got, want)
		}
		if got, want := s.EndTime, epochText(t, f[2]); !got.Equal(want) {
			t.Errorf("%s: end %v, want %v", f[0], got, want)
		}
		if len(f) == 4 {
			p := byName[f[3]]
			if s.Parent.SpanID != p.SpanContext.SpanID || s.SpanContext.TraceID != p.SpanContext.TraceID {
				t.Errorf("%s: parent %s/%s, want %s's %s/%s", f[0], s.Parent.TraceID, s.Parent.SpanID, f[3], p.SpanContext.TraceID, p.SpanContext.SpanID)
			}
		} else if s.Parent.SpanID != "0000000000000000" {
			t.Errorf("%s: a root with parent %s", f[0], s.Parent.SpanID)
		}
	}
}

// epochText reads plain decimal epoch seconds ("1700000000.5") without
// package completed: the integer part through time.Unix, the fraction as
// nanosecond digits, padded.
func epochText(t *testing.T, v string) time.Time {
	t.Helper()
	sec, frac, _ := strings.Cut(v, ".")
	var s, ns int64
	for _, c := range sec {
		s = s*10 + int64(c-'0')
	}
	frac = (frac + "000000000")[:9]
	for _, c := range frac {
		ns = ns*10 + int64(c-'0')
	}
	return time.Unix(s, ns)
}

// TestEmitSpansResource: --service beats OTEL_SERVICE_NAME and the
// carrier's service.name; the carrier's other attributes are on the
// resource.
func TestEmitSpansResource(t *testing.T) {
	t.Parallel()
	env := environ.Map{"OTEL_SERVICE_NAME": "from-env", "OTEL_RESOURCE_ATTRIBUTES": "service.name=from-carrier,team.name=infra"}
	row := emitRow{specs: []string{"a,1,2"}, env: env}
	for _, tc := range []struct {
		args []string
		want string
	}{{nil, "from-env"}, {[]string{"--service", "launcher"}, "launcher"}} {
		row.args = tc.args
		r, spans := emitConsole(t, row)
		if r.code != 0 || len(spans) != 1 {
			t.Fatalf("%v", r)
		}
		if got := spans[0].resource("service.name"); got != tc.want {
			t.Errorf("%v: service.name %v, want %s", tc.args, got, tc.want)
		}
		if got := spans[0].resource("team.name"); got != "infra" {
			t.Errorf("team.name %v, want the carrier's", got)
		}
	}
}

// TestEmitSpansOTLP: the OTLP exporter is the default; the signal-specific
// endpoint beats the generic one; a collector that fails the export, or a
// port that refuses, makes the command fail.
func TestEmitSpansOTLP(t *testing.T) {
	t.Parallel()
	specs := []string{"--span", "job,1700000000,1700000100", "--span", "step,1700000010,1700000090,job"}
	for _, protocol := range []string{"grpc", "http/protobuf"} {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			ok := collectortest.New(t, protocol, collectortest.OK)
			bad := collectortest.New(t, protocol, collectortest.Fail)
			env := environ.Map{
				"OTEL_EXPORTER_OTLP_PROTOCOL":        protocol,
				"OTEL_EXPORTER_OTLP_ENDPOINT":        bad.Endpoint,
				"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": ok.Endpoint,
			}
			if protocol == "http/protobuf" {
				env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = ok.Endpoint + "/v1/traces"
			}
			r := runIn(t, env, "", append([]string{"emit-spans"}, specs...)...)
			if r.code != 0 {
				t.Fatalf("%v", r)
			}
			if n := len(ok.Spans()); n != 2 || bad.Requests(collectortest.Traces) != 0 {
				t.Errorf("%d spans at the traces endpoint, %d exports at the generic one; want 2 and 0", n, bad.Requests(collectortest.Traces))
			}

			delete(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
			r = runIn(t, env, "", append([]string{"emit-spans", "--flush-timeout", "20s"}, specs...)...)
			if r.code != 1 || !strings.Contains(r.stderr, "lens emit-spans: export") {
				t.Errorf("failing collector: %v, want exit 1 and the export error", r)
			}

			env["OTEL_EXPORTER_OTLP_ENDPOINT"] = collectortest.Refused(t)
			r = runIn(t, env, "", append([]string{"emit-spans", "--flush-timeout", "20s"}, specs...)...)
			if r.code != 1 || !strings.Contains(r.stderr, "lens emit-spans: export") {
				t.Errorf("refused: %v, want exit 1 and the export error", r)
			}
		})
	}
}

// FuzzEmitSpans: lens emit-spans exits 0 and exports every span exactly
// when completed.ParseSet accepts the values, else exits 2 and exports
// nothing.
func FuzzEmitSpans(f *testing.F) {
	for _, row := range emitRows {
		if row.env == nil && row.args == nil {
			f.Add(strings.Join(row.specs, "\n"))
		}
	}
	f.Fuzz(func(t *testing.T, in string) {
		specs := strings.Split(in, "\n")
		_, perr := completed.ParseSet(specs)
		r, spans := emitConsole(t, emitRow{specs: specs})
		switch {
		case perr == nil && (r.code != 0 || len(spans) != len(specs)):
			t.Fatalf("valid set: exit %d, %d of %d spans\n%v", r.code, len(spans), len(specs), r)
		case perr != nil && (r.code != 2 || len(spans) != 0):
			t.Fatalf("invalid set (%v): exit %d, %d spans", perr, r.code, len(spans))
		}
	})
}
