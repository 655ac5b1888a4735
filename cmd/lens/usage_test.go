package main

import (
	"debug/buildinfo"
	"fmt"
	"runtime"
	"strings"
	"testing"

	lens "github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/internal/telemetry"
)

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args   []string
		stdin  string
		reason string // the first line of stderr
		usage  string // the usage line that follows
	}{
		{nil, "", "lens: missing command", "usage: lens [--help]"},
		{[]string{"nope"}, "", `lens: unknown command "nope"`, "usage: lens [--help]"},
		{[]string{"--nope"}, "", "lens: unknown flag --nope", "usage: lens [--help]"},
		{[]string{"help", "nope"}, "", `lens: unknown command "nope"`, "usage: lens [--help]"},
		{[]string{"detect", "--bogus"}, "", "lens detect: unknown flag --bogus", "usage: lens detect "},
		{[]string{"detect", "--only", "mars"}, "", `lens detect: invalid value "mars" for flag --only: must be one of local, slurm, kubernetes, gpus`, "usage: lens detect "},
		{[]string{"detect", "--format"}, "", "lens detect: flag needs an argument: --format", "usage: lens detect "},
		{[]string{"detect", "extra"}, "", `lens detect: unexpected argument "extra"`, "usage: lens detect "},
		{[]string{"detect", "--format", "env", "--explain"}, "", "lens detect: --explain cannot be combined with --format env", "usage: lens detect "},
		{[]string{"resource", "--attr", "novalue"}, "", `lens resource: invalid value "novalue" for flag --attr: want KEY=VALUE`, "usage: lens resource "},
		{[]string{"resource", "--attr", "=v"}, "", `lens resource: invalid value "=v" for flag --attr: want KEY=VALUE`, "usage: lens resource "},
		{[]string{"carrier"}, "", "lens carrier: missing command", "usage: lens carrier "},
		{[]string{"carrier", "nope"}, "", `lens carrier: unknown command "nope"`, "usage: lens carrier "},
		{[]string{"carrier", "parse", "x"}, "", `lens carrier parse: unexpected argument "x"`, "usage: lens carrier parse "},
		{[]string{"carrier", "format"}, "", "lens carrier format: stdin: invalid JSON at line 1, column 1 (byte offset 0): unexpected end of JSON input", "usage: lens carrier format "},
		{[]string{"carrier", "format"}, "{\n  \"a\": 1,\n  \"b\": tru\n}", "lens carrier format: stdin: invalid JSON at line 3, column 11 (byte offset 22): invalid character '\\n' in literal true (expecting 'e')", "usage: lens carrier format "},
		{[]string{"carrier", "format"}, `{"a":1} {}`, "lens carrier format: stdin: invalid JSON at line 1, column 9 (byte offset 8): invalid character '{' after top-level value", "usage: lens carrier format "},
		{[]string{"carrier", "format"}, ` [1]`, "lens carrier format: stdin: invalid JSON at line 1, column 2 (byte offset 1): expected a JSON object, found an array", "usage: lens carrier format "},
		{[]string{"carrier", "extend", "--defaults", `{"a":}`}, "", "lens carrier extend: --defaults: invalid JSON at line 1, column 6 (byte offset 5): invalid character '}' looking for beginning of value", "usage: lens carrier extend "},
		{[]string{"carrier", "extend", "--overrides", `"s"`}, "", "lens carrier extend: --overrides: invalid JSON at line 1, column 1 (byte offset 0): expected a JSON object, found a string", "usage: lens carrier extend "},
		{[]string{"carrier", "check", "--nope"}, "", "lens carrier check: unknown flag --nope", "usage: lens carrier check "},
		{[]string{"uuid"}, "", "lens uuid: missing command", "usage: lens uuid "},
		{[]string{"uuid", "run", "x"}, "", `lens uuid run: unexpected argument "x"`, "usage: lens uuid run "},
		{[]string{"env"}, "", "lens env: --stage is required", "usage: lens env "},
		{[]string{"env", "--stage", "login"}, "", `lens env: invalid value "login" for flag --stage: must be one of sbatch, task`, "usage: lens env "},
		{[]string{"env", "--stage", "sbatch", "--container-image", "img"}, "", "lens env: --container-image requires --stage task", "usage: lens env "},
		{[]string{"exec"}, "", "lens exec: missing command", "usage: lens exec "},
		{[]string{"exec", "--"}, "", "lens exec: missing command", "usage: lens exec "},
		{[]string{"exec", "--attr", "x", "--", "true"}, "", `lens exec: invalid value "x" for flag --attr: want KEY=VALUE`, "usage: lens exec "},
		{[]string{"exec", "--flush-timeout", "0s", "true"}, "", "lens exec: --flush-timeout must be positive", "usage: lens exec "},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			r := runIn(t, nil, tc.stdin, tc.args...)
			lines := strings.Split(r.stderr, "\n")
			if r.code != 2 || r.stdout != "" || len(lines) < 2 || lines[0] != tc.reason || !strings.HasPrefix(lines[1], tc.usage) {
				t.Errorf("lens %q:\n%v\nwant exit 2, stderr %q then %q...", tc.args, r, tc.reason, tc.usage)
			}
		})
	}
}

func TestUsageErrorBinary(t *testing.T) {
	t.Parallel()
	r := runBin(t, nil, "", "detect", "--only")
	if r.code != 2 || !strings.HasPrefix(r.stderr, "lens detect: flag needs an argument: --only\nusage: lens detect ") {
		t.Errorf("lens detect --only: %v", r)
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want []string // substrings of stdout
	}{
		{[]string{"--help"}, []string{"usage: lens [--help]", "commands:", "detect", "resource", "carrier", "uuid", "env", "exec"}},
		{[]string{"-h"}, []string{"usage: lens [--help]"}},
		{[]string{"help"}, []string{"usage: lens [--help]"}},
		{[]string{"help", "carrier", "extend"}, []string{"usage: lens carrier extend", "--defaults JSON", "--overrides JSON"}},
		{[]string{"detect", "--help"}, []string{"usage: lens detect", "--only local|slurm|kubernetes", "--format text|json|env", "--explain", "(default text)"}},
		{[]string{"resource", "-h"}, []string{"usage: lens resource", "--attr KEY=VALUE"}},
		{[]string{"carrier", "--help"}, []string{"usage: lens carrier", "parse", "format", "extend", "check"}},
		{[]string{"carrier", "parse", "--help"}, []string{"usage: lens carrier parse"}},
		{[]string{"carrier", "check", "--help"}, []string{"--require KEYS", "--forbid KEYS"}},
		{[]string{"uuid", "run", "--help"}, []string{"usage: lens uuid run", "--run-id ID", "--name"}},
		{[]string{"env", "--help"}, []string{"usage: lens env", "--stage sbatch|task", "--container-image IMAGE"}},
		{[]string{"exec", "--help"}, []string{"usage: lens exec", "--role ROLE", "--flush-timeout D", "(default 5s)"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			r := runIn(t, nil, "", tc.args...)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("lens %q: %v", tc.args, r)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("lens %q: stdout lacks %q:\n%s", tc.args, w, r.stdout)
				}
			}
		})
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	b := telemetry.BuildOf()
	want := "lens " + lens.Version() + "\n"
	if r := runIn(t, nil, "", "--version"); r.code != 0 || !strings.HasPrefix(r.stdout, want) ||
		!strings.Contains(r.stdout, "\ngo: "+runtime.Version()+"\n") ||
		!strings.HasSuffix(r.stdout, "\nplatform: "+runtime.GOOS+"/"+runtime.GOARCH+"\n") || b.Version != lens.Version() {
		t.Errorf("lens --version: %v, want it to start with %q", r, want)
	}
	if r := runBin(t, nil, "", "--version"); r.code != 0 || r.stdout != binaryVersionText(t) {
		t.Errorf("binary lens --version: %v, want %q", r, binaryVersionText(t))
	}
}

// binaryVersion returns the main-module version stamped into the lens
// binary: "(devel)", or a pseudo-version when the go command stamps one
// from the checkout (a git clone built without -buildvcs=false).
func binaryVersion(t *testing.T) string {
	t.Helper()
	info, err := buildinfo.ReadFile(lensBin)
	if err != nil {
		t.Fatal(err)
	}
	if info.Main.Version == "" {
		return "(devel)"
	}
	return info.Main.Version
}

// binaryVersionText returns what lens --version of the lens binary prints,
// read from its build information: binaryVersion, the vcs.revision and
// vcs.modified settings ("unknown" without them), the Go version and the
// platform.
func binaryVersionText(t *testing.T) string {
	t.Helper()
	info, err := buildinfo.ReadFile(lensBin)
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]string{"vcs.revision": "unknown", "vcs.modified": "unknown"}
	for _, s := range info.Settings {
		set[s.Key] = s.Value
	}
	return fmt.Sprintf("lens %s\ncommit: %s\nmodified: %s\ngo: %s\nplatform: %s/%s\n", binaryVersion(t),
		set["vcs.revision"], set["vcs.modified"], info.GoVersion, set["GOOS"], set["GOARCH"])
}
