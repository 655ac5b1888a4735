package main

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/nemolens/lens-go/internal/collectortest"
	"github.com/nemolens/lens-go/internal/faulttest"
)

// Fault injection against the lens binary: "telemetry never breaks the
// job". lens runs with exactly the environment a test gives it (runBin),
// exports to real collectors (internal/collectortest: HTTP and gRPC
// servers that answer, fail or hang, a TCP listener that never answers, a
// port that refuses), and the test reads what a user would see: the
// command's output and exit status, lens's stderr, and what reached the
// collector.

// telemetryEnv turns telemetry on, exporting to endpoint over protocol.
func telemetryEnv(endpoint, protocol string, extra map[string]string) map[string]string {
	env := map[string]string{
		"NEMO_LENS_ENABLED":           "true",
		"NEMO_LENS_RUN_ID":            "run1",
		"OTEL_RESOURCE_ATTRIBUTES":    "nv.dl.rank=0",
		"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
		"OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
	}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

func skipUnlessLinux(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the 128 KiB per-string limit is Linux's")
	}
}

// TestFaultExecCarrierTooLarge: with an inherited carrier whose re-encoding
// does not fit in an environment string, lens exec -- /bin/echo hi prints
// hi and exits 0 (on the old code, execve failed with E2BIG and lens exited
// 126): the command gets the inherited carrier, and lens says so once on
// stderr. With telemetry on, lens's span is still exported.
func TestFaultExecCarrierTooLarge(t *testing.T) {
	t.Parallel()
	skipUnlessLinux(t)
	if len(faulttest.BigCarrier()) != 44012 || len(faulttest.FullCarrier()) != 131046 {
		t.Fatalf("carriers of %d and %d bytes", len(faulttest.BigCarrier()), len(faulttest.FullCarrier()))
	}
	for name, text := range map[string]string{"44012-bytes": faulttest.BigCarrier(), "131046-bytes-of-%zz": faulttest.FullCarrier()} {
		for _, telemetry := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/telemetry=%v", name, telemetry), func(t *testing.T) {
				t.Parallel()
				env := map[string]string{"OTEL_RESOURCE_ATTRIBUTES": text}
				var c *collectortest.Collector
				if telemetry {
					c = collectortest.NewHTTP(t, collectortest.OK)
					env = telemetryEnv(c.Endpoint, "http/protobuf", env)
					env["OTEL_RESOURCE_ATTRIBUTES"] = text
				}
				r := runBin(t, env, "", "exec", "--", "/bin/echo", "hi")
				if r.code != 0 || r.stdout != "hi\n" {
					t.Fatalf("lens exec -- /bin/echo hi: %v", r)
				}
				l := faulttest.Lines(r.stderr)
				if len(l) != 1 || !strings.Contains(l[0], "too long") || !strings.Contains(l[0], "inherited carrier") {
					t.Errorf("stderr %q, want one line saying the command got the inherited carrier", r.stderr)
				}
				if c != nil && c.Requests(collectortest.Traces) != 1 {
					t.Errorf("%d trace exports, want lens's span", c.Requests(collectortest.Traces))
				}
			})
		}
	}
}

// TestFaultEnvEvalCarrierTooLarge: eval "$(lens env --stage task)" in bash
// and sh, in a Slurm task whose carrier would grow past the limit, then
// external commands: they still start, because lens env prints the
// inherited carrier (or nothing when there is none) instead of an export
// that no exec could pass on.
func TestFaultEnvEvalCarrierTooLarge(t *testing.T) {
	t.Parallel()
	skipUnlessLinux(t)
	const script = `eval "$("$LENS" env --stage task)"
/bin/echo after
printenv OTEL_RESOURCE_ATTRIBUTES | wc -c
`
	for _, shell := range []string{"bash", "sh"} {
		path, err := exec.LookPath(shell)
		if err != nil {
			t.Run(shell, func(t *testing.T) { t.Skipf("%s is not installed", shell) })
			continue
		}
		for _, tc := range []struct {
			name string
			env  map[string]string
			want string // the output of the script
		}{
			{"inherited", map[string]string{"SLURM_JOB_ID": "1", "OTEL_RESOURCE_ATTRIBUTES": faulttest.FullCarrier()}, fmt.Sprintf("after\n%d\n", len(faulttest.FullCarrier())+1)},
			{"none", map[string]string{"SLURM_JOB_ID": "1", "SLURM_JOB_NAME": strings.Repeat("/", 100000)}, "after\n0\n"},
		} {
			t.Run(shell+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, path, "-c", script)
				cmd.Env = cliEnv(tc.env)
				cmd.Env = append(cmd.Env, "LENS="+lensBin)
				var stderr strings.Builder
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil || strings.TrimSpace(string(out)) != strings.TrimSpace(tc.want) {
					t.Errorf("%s: %v, output %q, want %q; stderr %q", shell, err, out, tc.want, stderr.String())
				}
				if l := faulttest.Lines(stderr.String()); len(l) != 1 || !strings.Contains(l[0], "lens env: the carrier would be") {
					t.Errorf("stderr %q, want one line from lens env", stderr.String())
				}
			})
		}
	}
}

// TestFaultExecBadNumbers: every numeric setting bad at once, over both
// protocols, at the default log level and at debug: the command runs, its
// status is lens's, the span is exported, and stderr has exactly one line
// per variable (at debug, exactly one naming each).
func TestFaultExecBadNumbers(t *testing.T) {
	t.Parallel()
	garbage := map[string]string{}
	for k := range faulttest.BadNumbers() {
		garbage[k] = "1.5s"
	}
	for _, protocol := range faulttest.Protocols() {
		for variant, values := range map[string]map[string]string{"out-of-range": faulttest.BadNumbers(), "not-integers": garbage} {
			t.Run(faulttest.ProtocolName(protocol)+"/"+variant, func(t *testing.T) {
				t.Parallel()
				c := collectortest.New(t, protocol, collectortest.OK)
				env := telemetryEnv(c.Endpoint, protocol, values)
				env[helperEnvName] = "exit=3"
				r := runBin(t, env, "", "exec", "--", self(t))
				if r.code != 3 {
					t.Fatalf("lens exec: %v, want the command's exit status 3", r)
				}
				for name := range values {
					n := 0
					for _, l := range faulttest.Lines(r.stderr) {
						if strings.Contains(l, name+"=") {
							n++
						}
					}
					if n != 1 {
						t.Errorf("%d stderr lines about %s, want 1:\n%s", n, name, r.stderr)
					}
				}
				if n := len(faulttest.Lines(r.stderr)); n != len(values) {
					t.Errorf("%d lines on stderr, want %d:\n%s", n, len(values), r.stderr)
				}
				if c.Requests(collectortest.Traces) != 1 {
					t.Errorf("%d trace exports, want 1", c.Requests(collectortest.Traces))
				}
			})
		}
	}
}

// TestFaultExecHeadersNoSecrets: a malformed OTEL_EXPORTER_OTLP_HEADERS
// holding a bearer token, over both protocols, at the default log level
// and at LENS_LOG_LEVEL=debug: the command runs, the span is exported, and
// no part of the token is on stderr or in what reached the collector.
func TestFaultExecHeadersNoSecrets(t *testing.T) {
	t.Parallel()
	for _, protocol := range faulttest.Protocols() {
		for form, header := range faulttest.HeaderForms() {
			for _, level := range []string{"", "debug"} {
				t.Run(faulttest.ProtocolName(protocol)+"/"+form+"/level="+level, func(t *testing.T) {
					t.Parallel()
					c := collectortest.New(t, protocol, collectortest.OK)
					r := runBin(t, telemetryEnv(c.Endpoint, protocol, map[string]string{
						"OTEL_EXPORTER_OTLP_HEADERS": header,
						"LENS_LOG_LEVEL":             level,
					}), "", "exec", "--", "true")
					if r.code != 0 {
						t.Fatalf("lens exec: %v", r)
					}
					for _, part := range faulttest.CanaryParts() {
						if strings.Contains(r.stderr, part) {
							t.Errorf("stderr shows %q of the secret header:\n%s", part, r.stderr)
						}
						if c.Contains(part) {
							t.Errorf("an export holds %q of the secret header", part)
						}
					}
					if c.Requests(collectortest.Traces) != 1 {
						t.Errorf("%d trace exports, want 1", c.Requests(collectortest.Traces))
					}
					if level == "debug" && !strings.Contains(r.stderr, "header") {
						t.Errorf("at debug, nothing says that the headers are malformed:\n%s", r.stderr)
					}
				})
			}
		}
	}
}

// exportedSpan returns the one span the collector received.
func exportedSpan(t *testing.T, c *collectortest.Collector) *tracepb.Span {
	t.Helper()
	spans := c.Spans()
	if len(spans) != 1 {
		t.Fatalf("the collector received %d spans, want 1", len(spans))
	}
	return spans[0]
}

// TestFaultExecArgvStaysOut: lens exec's span never carries the command's
// arguments (which may hold secrets) unless --command-args asks for them.
func TestFaultExecArgvStaysOut(t *testing.T) {
	t.Parallel()
	const canary = "ARGVCANARY"
	for _, withFlag := range []bool{false, true} {
		t.Run(fmt.Sprint("command-args=", withFlag), func(t *testing.T) {
			t.Parallel()
			c := collectortest.NewHTTP(t, collectortest.OK)
			args := []string{"exec"}
			if withFlag {
				args = append(args, "--command-args")
			}
			args = append(args, "--", "true", "--api-key="+canary)
			r := runBin(t, telemetryEnv(c.Endpoint, "http/protobuf", nil), "", args...)
			if r.code != 0 {
				t.Fatalf("lens exec: %v", r)
			}
			span := exportedSpan(t, c)
			got, ok := collectortest.SpanAttr(span, "process.command_args")
			if withFlag {
				if want := []any{"true", "--api-key=" + canary}; !ok || !slices.Equal(toStrings(got), toStrings(want)) {
					t.Errorf("process.command_args = %v (set %v), want %v", got, ok, want)
				}
			} else {
				if ok {
					t.Errorf("process.command_args = %v without --command-args", got)
				}
				if c.Contains(canary) {
					t.Errorf("the argument reached the collector without --command-args")
				}
			}
			if n, _ := collectortest.SpanAttr(span, "process.args_count"); n != int64(2) {
				t.Errorf("process.args_count = %v, want 2", n)
			}
			if strings.Contains(r.stderr, canary) {
				t.Errorf("stderr shows the argument: %q", r.stderr)
			}
		})
	}
}

func toStrings(v any) []string {
	var out []string
	if list, ok := v.([]any); ok {
		for _, e := range list {
			out = append(out, fmt.Sprint(e))
		}
	}
	return out
}

// TestFaultExecSDKNoise: an inherited carrier with a trailing comma or a bad
// escape: the OpenTelemetry SDK's own parse complains, but lens exec prints
// nothing at all about it.
func TestFaultExecSDKNoise(t *testing.T) {
	t.Parallel()
	for name, text := range map[string]string{"trailing-comma": "nv.dl.rank=0,a=1,", "bad-escape": "nv.dl.rank=0,a=%zz"} {
		for _, protocol := range faulttest.Protocols() {
			t.Run(name+"/"+faulttest.ProtocolName(protocol), func(t *testing.T) {
				t.Parallel()
				c := collectortest.New(t, protocol, collectortest.OK)
				r := runBin(t, telemetryEnv(c.Endpoint, protocol, map[string]string{"OTEL_RESOURCE_ATTRIBUTES": text}), "", "exec", "--", "true")
				if r.code != 0 || r.stderr != "" || c.Requests(collectortest.Traces) != 1 {
					t.Errorf("lens exec: %v; %d trace exports; want exit 0, nothing on stderr, the span exported", r, c.Requests(collectortest.Traces))
				}
			})
		}
	}
}

// TestFaultExecCollector: lens exec with a collector that refuses, never
// answers (a bare TCP listener; a server whose handler hangs) or fails
// (HTTP 500, gRPC Internal), over both protocols: the command's status is
// lens's, and stderr has exactly one line — about the refused connection,
// the deadline (--flush-timeout), or the collector's error.
func TestFaultExecCollector(t *testing.T) {
	t.Parallel()
	for _, protocol := range faulttest.Protocols() {
		for _, tc := range []struct {
			name     string
			endpoint func(t testing.TB) string
			flush    string
			want     string // in the stderr line
			avoid    string // not in it
		}{
			// 30s where the outcome is not the deadline: a hang guard only.
			{"refused", collectortest.Refused, "30s", "refused the connection", "deadline"},
			{"silent-listener", collectortest.Silent, "300ms", "deadline exceeded", "refused"},
			{"hanging-server", func(t testing.TB) string { return collectortest.New(t, protocol, collectortest.Hang).Endpoint }, "300ms", "deadline exceeded", "refused"},
			{"failing-server", func(t testing.TB) string { return collectortest.New(t, protocol, collectortest.Fail).Endpoint }, "30s", "failing on purpose", "deadline"},
		} {
			for _, status := range []int{0, 3} {
				t.Run(fmt.Sprintf("%s/%s/exit=%d", faulttest.ProtocolName(protocol), tc.name, status), func(t *testing.T) {
					t.Parallel()
					env := telemetryEnv(tc.endpoint(t), protocol, map[string]string{helperEnvName: fmt.Sprintf("exit=%d", status)})
					r := runBin(t, env, "", "exec", "--flush-timeout", tc.flush, "--", self(t))
					if r.code != status {
						t.Errorf("lens exec: %v, want exit %d", r, status)
					}
					l := faulttest.Lines(r.stderr)
					if len(l) != 1 || !strings.HasPrefix(l[0], "lens exec: telemetry shutdown: ") ||
						!strings.Contains(l[0], tc.want) || strings.Contains(l[0], tc.avoid) {
						t.Errorf("stderr %q, want one telemetry shutdown line about %q", r.stderr, tc.want)
					}
				})
			}
		}
	}
}

// TestExecSpanOutcome pins lens exec's span: process.exit.code is the
// command's status (128+N when signal N killed it) and a non-zero status
// sets the status to Error; zero leaves it Unset.
func TestExecSpanOutcome(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode  string
		code  int64
		error bool
	}{
		{"exit=0", 0, false},
		{"exit=3", 3, true},
		{"kill", 137, true},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			c := collectortest.NewHTTP(t, collectortest.OK)
			r := runBin(t, telemetryEnv(c.Endpoint, "http/protobuf", map[string]string{helperEnvName: tc.mode}), "", "exec", "--", self(t))
			if int64(r.code) != tc.code {
				t.Errorf("lens exec: %v, want exit %d", r, tc.code)
			}
			span := exportedSpan(t, c)
			if got, _ := collectortest.SpanAttr(span, "process.exit.code"); got != tc.code {
				t.Errorf("process.exit.code = %v, want %d", got, tc.code)
			}
			wantStatus := tracepb.Status_STATUS_CODE_UNSET
			if tc.error {
				wantStatus = tracepb.Status_STATUS_CODE_ERROR
			}
			if got := span.GetStatus().GetCode(); got != wantStatus {
				t.Errorf("span status %v (%q), want %v", got, span.GetStatus().GetMessage(), wantStatus)
			}
			if tc.error && span.GetStatus().GetMessage() == "" {
				t.Error("the Error status has no description")
			}
		})
	}
}

// TestExecStdin: the command reads lens's standard input.
func TestExecStdin(t *testing.T) {
	t.Parallel()
	const input = "line one\nline two\n"
	if r := runBin(t, nil, input, "exec", "--", "cat"); r.code != 0 || r.stdout != input {
		t.Errorf("lens exec -- cat: %v, want stdin copied to stdout", r)
	}
	if r := runIn(t, nil, input, "exec", "--", "cat"); r.code != 0 || r.stdout != input {
		t.Errorf("in-process lens exec -- cat: %v, want stdin copied to stdout", r)
	}
}

// BenchmarkExecRefusedCollector reports the wall time of lens exec -- true
// with telemetry on and an OTLP endpoint that refuses connections, with
// --flush-timeout 5s, per protocol, and of lens exec -- true without
// telemetry for reference. Run it with
//
//	go test -run '^$' -bench ExecRefusedCollector ./cmd/lens
func BenchmarkExecRefusedCollector(b *testing.B) {
	for _, protocol := range append([]string{"telemetry-off"}, faulttest.Protocols()...) {
		b.Run(faulttest.ProtocolName(protocol), func(b *testing.B) {
			env := cliEnv(nil)
			if protocol != "telemetry-off" {
				env = cliEnv(telemetryEnv(collectortest.Refused(b), protocol, nil))
			}
			var last string
			for b.Loop() {
				cmd := exec.Command(lensBin, "exec", "--flush-timeout", "5s", "--", "true")
				cmd.Env = env
				out, err := cmd.CombinedOutput()
				if err != nil {
					b.Fatalf("lens exec: %v\n%s", err, out)
				}
				last = string(out)
			}
			if refused := strings.Contains(last, "refused"); refused != (protocol != "telemetry-off") {
				b.Fatalf("output %q", last)
			}
		})
	}
}

// TestFaultExecBadEndpoint: malformed OTLP endpoints, and endpoints with
// credentials, over both protocols, at the default level and at debug: the
// command's status is lens's, the default level shows one telemetry line,
// and the password never appears.
func TestFaultExecBadEndpoint(t *testing.T) {
	t.Parallel()
	const password = "PWCANARY"
	refused := strings.TrimPrefix(collectortest.Refused(t), "http://")
	// An endpoint lens cannot use — credentials in the URL included — is
	// one line naming the variable (docs/resource.md#otlp-endpoint-and-tls).
	const disabled = "lens exec: telemetry disabled: OTEL_EXPORTER_OTLP_ENDPOINT="
	for name, tc := range map[string]struct{ endpoint, want string }{
		"no-scheme":         {"::::", disabled},
		"unclosed-bracket":  {"http://[::1", disabled},
		"port-out-of-range": {"http://127.0.0.1:99999", disabled},
		// Credentials in the URL are refused (docs/resource.md#endpoint-credentials).
		"credentials":          {"http://user:" + password + "@" + refused, disabled},
		"credentials-and-typo": {"http://user:" + password + "@[::1", disabled},
	} {
		endpoint := tc.endpoint
		for _, protocol := range faulttest.Protocols() {
			for _, level := range []string{"", "debug"} {
				t.Run(name+"/"+faulttest.ProtocolName(protocol)+"/level="+level, func(t *testing.T) {
					t.Parallel()
					env := telemetryEnv(endpoint, protocol, map[string]string{helperEnvName: "exit=3", "LENS_LOG_LEVEL": level})
					r := runBin(t, env, "", "exec", "--flush-timeout", "300ms", "--", self(t))
					if r.code != 3 {
						t.Errorf("lens exec: %v, want exit 3", r)
					}
					if strings.Contains(r.stderr, password) {
						t.Errorf("stderr shows the endpoint's password:\n%s", r.stderr)
					}
					if l := faulttest.Lines(r.stderr); level == "" && (len(l) != 1 || !strings.HasPrefix(l[0], tc.want)) {
						t.Errorf("stderr %q, want one line starting %q", r.stderr, tc.want)
					}
				})
			}
		}
	}
}
