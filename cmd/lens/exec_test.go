//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/environ"
)

// self returns the path of the test binary, which doubles as the command
// lens exec runs (see helper in main_test.go).
func self(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func helperEnv(mode string, extra map[string]string) map[string]string {
	env := map[string]string{helperEnvName: mode}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

// childEnviron decodes the JSON array printed by helper mode "env".
func childEnviron(t *testing.T, stdout string) map[string]string {
	t.Helper()
	var list []string
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout)), &list); err != nil {
		t.Fatalf("child output %q: %v", stdout, err)
	}
	return environ.FromList(list)
}

func TestExecExitStatus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode string
		want int
	}{
		{"exit=0", 0},
		{"exit=3", 3},
		{"exit=255", 255},
		{"kill", 128 + int(syscall.SIGKILL)},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			r := runBin(t, helperEnv(tc.mode, nil), "", "exec", "--", self(t))
			if r.code != tc.want {
				t.Errorf("lens exec (child %s): %v, want exit %d", tc.mode, r, tc.want)
			}
		})
	}
}

func TestExecStartFailure(t *testing.T) {
	t.Parallel()
	notExec := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		command string
		want    int
	}{
		{"not found in PATH", "lens-test-no-such-command", 127},
		{"no such file", filepath.Join(t.TempDir(), "missing"), 127},
		{"not executable", notExec, 126},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runBin(t, nil, "", "exec", "--", tc.command)
			if r.code != tc.want || !strings.HasPrefix(r.stderr, "lens exec: ") {
				t.Errorf("lens exec %s: %v, want exit %d and a message", tc.command, r, tc.want)
			}
		})
	}
}

// TestExecSignalForwarding sends a signal to lens alone (not its process
// group) and checks that the command receives it and that lens exits with
// the command's status.
func TestExecSignalForwarding(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sig      syscall.Signal
		wantLine string
		wantCode int
	}{
		{syscall.SIGINT, "got interrupt", 7},
		{syscall.SIGTERM, "got terminated", 128 + int(syscall.SIGTERM)},
	} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, lensBin, "exec", "--", self(t))
			cmd.Env = cliEnv(helperEnv("signal", nil))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := bufio.NewScanner(out)
			if !lines.Scan() || lines.Text() != "ready" {
				t.Fatalf("child did not start: %q, stderr %q", lines.Text(), stderr.String())
			}
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			var rest []string
			for lines.Scan() {
				rest = append(rest, lines.Text())
			}
			code, err := shellStatus(cmd.Wait())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(rest, []string{tc.wantLine}) {
				t.Errorf("child printed %q, want %q (stderr %q)", rest, tc.wantLine, stderr.String())
			}
			if code != tc.wantCode {
				t.Errorf("lens exited %d, want %d (stderr %q)", code, tc.wantCode, stderr.String())
			}
		})
	}
}

// TestExecNoShell: arguments reach the command literally; nothing is
// interpreted by a shell.
func TestExecNoShell(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	args := []string{"$(touch pwned1)", "`touch pwned2`", "; touch pwned3", "a b", "'q'", `"dq"`, "*", "$HOME", "\n", ""}
	cmd := exec.Command(lensBin, append([]string{"exec", "--", self(t)}, args...)...)
	cmd.Env = cliEnv(helperEnv("args", map[string]string{"HOME": "/home/h"}))
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("lens exec: %v", err)
	}
	var got []string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("child output %q: %v", out, err)
	}
	if !slices.Equal(got, args) {
		t.Errorf("child got %q, want %q", got, args)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		t.Errorf("a shell ran: %s was created", e.Name())
	}
}

func TestExecCarrier(t *testing.T) {
	t.Parallel()
	const current = "a=1,nv.dl.role=old,odd=%2Fx"
	overrides := attr.FromStrings("b", "x,y", "a", "2", "nv.dl.role", "trainer")
	want, _ := carrier.Extend(current, nil, overrides)
	const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	env := helperEnv("env", map[string]string{
		carrier.EnvVar: current,
		"TRACEPARENT":  traceparent,
		"TRACESTATE":   "k=v",
	})
	args := []string{"exec", "--attr", "b=x,y", "--attr", "a=0", "--attr", "a=2", "--role", "trainer", "--", self(t)}

	r := runBin(t, env, "", args...)
	if r.code != 0 {
		t.Fatalf("lens exec: %v", r)
	}
	got := childEnviron(t, r.stdout)
	if got[carrier.EnvVar] != want {
		t.Errorf("child carrier %q, want %q", got[carrier.EnvVar], want)
	}
	if want != "a=2,nv.dl.role=trainer,odd=%2Fx,b=x%2Cy" {
		t.Errorf("carrier.Extend gave %q", want)
	}
	// Telemetry is off: the trace context passes through unchanged.
	if got["TRACEPARENT"] != traceparent || got["TRACESTATE"] != "k=v" {
		t.Errorf("child TRACEPARENT %q TRACESTATE %q, want them unchanged", got["TRACEPARENT"], got["TRACESTATE"])
	}

	// In-process, with the environment injected.
	env[helperEnvName] = "env"
	in := runIn(t, environ.Map(env), "", args...)
	if in.code != 0 {
		t.Fatalf("in-process lens exec: %v", in)
	}
	if got := childEnviron(t, in.stdout); got[carrier.EnvVar] != want {
		t.Errorf("in-process: child carrier %q, want %q", got[carrier.EnvVar], want)
	}
}

var traceparentRE = regexp.MustCompile(`^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$`)

// consoleSpan is the part of a stdouttrace span record the tests read.
type consoleSpan struct {
	Name        string
	SpanContext struct{ TraceID, SpanID string }
	Parent      struct{ TraceID, SpanID string }
	StartTime   time.Time
	EndTime     time.Time
	Links       []struct {
		SpanContext struct{ TraceID, SpanID string }
	}
	Attributes []struct {
		Key   string
		Value struct{ Value any }
	}
	Status   struct{ Code string }
	Resource []struct {
		Key   string
		Value struct{ Value any }
	}
}

func (s consoleSpan) attr(key string) any {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value.Value
		}
	}
	return nil
}

func (s consoleSpan) resource(key string) any {
	for _, a := range s.Resource {
		if a.Key == key {
			return a.Value.Value
		}
	}
	return nil
}

// TestExecTraceContext: with telemetry on, the command gets a valid W3C
// TRACEPARENT naming lens's span, which continues lens's own trace context.
var wrapperIDRE = regexp.MustCompile(`^run1-rank3\.lens-exec\.[1-9][0-9]*$`)

func TestExecTraceContext(t *testing.T) {
	t.Parallel()
	const parentTrace, parentSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	for _, tc := range []struct {
		name   string
		parent bool
	}{{"root", false}, {"continues TRACEPARENT", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			extra := map[string]string{
				"NEMO_LENS_ENABLED":  "true",
				"NEMO_LENS_EXPORTER": "console",
				"NEMO_LENS_RUN_ID":   "run1",
				carrier.EnvVar:       "nv.dl.rank=3",
				"TRACESTATE":         "stale=1",
			}
			if tc.parent {
				extra["TRACEPARENT"] = "00-" + parentTrace + "-" + parentSpan + "-01"
				extra["TRACESTATE"] = "vendor=x"
			}
			r := runBin(t, helperEnv("env", extra), "", "exec", "--role", "trainer", "--", self(t))
			if r.code != 0 {
				t.Fatalf("lens exec: %v", r)
			}
			got := childEnviron(t, r.stdout)
			m := traceparentRE.FindStringSubmatch(got["TRACEPARENT"])
			if m == nil || m[1] == strings.Repeat("0", 32) || m[2] == strings.Repeat("0", 16) {
				t.Fatalf("child TRACEPARENT %q is not a valid W3C traceparent", got["TRACEPARENT"])
			}
			if m[3] != "01" {
				t.Errorf("child TRACEPARENT %q is not sampled", got["TRACEPARENT"])
			}
			wantState, hasState := "", false
			if tc.parent {
				wantState, hasState = "vendor=x", true
			}
			if s, ok := got["TRACESTATE"]; s != wantState || ok != hasState {
				t.Errorf("child TRACESTATE %q (set %v), want %q (set %v)", s, ok, wantState, hasState)
			}
			// The console exporter writes the span to lens's stderr, one JSON
			// object; other lines (a coverage warning of the helper) may come
			// first.
			spans := consoleSpans(t, r.stderr)
			if len(spans) != 1 {
				t.Fatalf("%d console spans on stderr %q, want 1", len(spans), r.stderr)
			}
			span := spans[0]
			if span.SpanContext.TraceID != m[1] || span.SpanContext.SpanID != m[2] {
				t.Errorf("span %s/%s, child TRACEPARENT %s", span.SpanContext.TraceID, span.SpanContext.SpanID, got["TRACEPARENT"])
			}
			if tc.parent && (span.Parent.TraceID != parentTrace || span.Parent.SpanID != parentSpan) {
				t.Errorf("span parent %s/%s, want %s/%s", span.Parent.TraceID, span.Parent.SpanID, parentTrace, parentSpan)
			}
			if want := "lens exec " + filepath.Base(self(t)); span.Name != want {
				t.Errorf("span name %q, want %q", span.Name, want)
			}
			if c := span.attr("process.exit.code"); c != float64(0) {
				t.Errorf("process.exit.code = %v", c)
			}
			if c := span.attr("process.command"); c != self(t) {
				t.Errorf("process.command = %v", c)
			}
			if r := span.resource("nv.dl.role"); r != "trainer" {
				t.Errorf("resource nv.dl.role = %v", r)
			}
			// The wrapper never reports the command's instance id.
			if r, _ := span.resource("service.instance.id").(string); !wrapperIDRE.MatchString(r) {
				t.Errorf("resource service.instance.id = %v, want run1-rank3.lens-exec.<pid>", r)
			}
			if got["NEMO_LENS_RUN_ID"] != "run1" {
				t.Errorf("child NEMO_LENS_RUN_ID = %q, want run1", got["NEMO_LENS_RUN_ID"])
			}
			// argv stays out of the span unless --command-args.
			if c := span.attr("process.command_args"); c != nil {
				t.Errorf("process.command_args = %v without --command-args", c)
			}
			if c := span.attr("process.args_count"); c != float64(1) {
				t.Errorf("process.args_count = %v, want 1", c)
			}
		})
	}
}

// refusedEndpoint is an OTLP endpoint nobody listens on.
func refusedEndpoint(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return "http://" + l.Addr().String()
}

// TestExecCollectorDown: with an OTLP endpoint nobody listens on, lens still
// runs the command, exits with its status and does not hang.
func TestExecCollectorDown(t *testing.T) {
	t.Parallel()
	endpoint := refusedEndpoint(t)
	for _, protocol := range []string{"grpc", "http/protobuf"} {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, lensBin, "exec", "--flush-timeout", "500ms", "--", self(t))
			cmd.Env = cliEnv(helperEnv("exit=3", map[string]string{
				"NEMO_LENS_ENABLED":           "true",
				"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
				"OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
			}))
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 3 {
				t.Errorf("lens exec: %v, want exit status 3; output %q", err, out)
			}
			if ctx.Err() != nil {
				t.Errorf("lens exec hung until the test's deadline")
			}
		})
	}
}

func TestExecTelemetryConfigError(t *testing.T) {
	t.Parallel()
	r := runBin(t, helperEnv("exit=0", map[string]string{"NEMO_LENS_ENABLED": "maybe"}), "", "exec", self(t))
	if r.code != 0 || !strings.Contains(r.stderr, "telemetry disabled") || !strings.Contains(r.stderr, "NEMO_LENS_ENABLED") {
		t.Errorf("lens exec with NEMO_LENS_ENABLED=maybe: %v, want the command run and a message", r)
	}
}

// consoleSpans decodes the console exporter's spans written among other
// lines of stderr.
func consoleSpans(t *testing.T, stderr string) []consoleSpan {
	t.Helper()
	var out []consoleSpan
	for rest := stderr; ; {
		i := strings.Index(rest, `{"Name"`)
		if i < 0 {
			return out
		}
		dec := json.NewDecoder(strings.NewReader(rest[i:]))
		var s consoleSpan
		if err := dec.Decode(&s); err != nil {
			t.Fatalf("console span in %q: %v", stderr, err)
		}
		out = append(out, s)
		rest = rest[i+int(dec.InputOffset()):]
	}
}
