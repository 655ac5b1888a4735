package main

import (
	"strings"
	"testing"

	"github.com/nemolens/lens-go/environ"
)

// messageCases are the messages a newcomer meets (docs/cli.md#conventions):
// each names the flag or variable the user set and the accepted form, or
// says that the output means "nothing found".
var messageCases = []struct {
	name   string
	env    environ.Map
	args   []string
	code   int
	stdout string // exact, when not empty
	stderr string // a substring of stderr
}{
	{
		name:   "NEMO_LENS_EXPORTER names its variable",
		env:    environ.Map{"NEMO_LENS_EXPORTER": "stdout"},
		args:   []string{"emit-spans", "--span", "a,1,2"},
		code:   1,
		stderr: `NEMO_LENS_EXPORTER="stdout": unknown exporter (want "otlp" or "console")`,
	},
	{
		name:   "OTEL_TRACES_EXPORTER names its variable",
		env:    environ.Map{"OTEL_TRACES_EXPORTER": "stdout"},
		args:   []string{"emit-spans", "--span", "a,1,2"},
		code:   1,
		stderr: `OTEL_TRACES_EXPORTER="stdout"`,
	},
	{
		name:   "a duration without its unit",
		args:   []string{"exec", "--flush-timeout", "5", "true"},
		code:   2,
		stderr: `invalid value "5" for flag --flush-timeout: want a duration with its unit, such as 5s, 500ms or 1m30s`,
	},
	{
		name:   "reckon --wait without its unit",
		args:   []string{"reckon", "--wait", "3", "1"},
		code:   2,
		stderr: `invalid value "3" for flag --wait: want a duration with its unit`,
	},
	{
		name:   "epoch milliseconds in --span",
		args:   []string{"emit-spans", "--span", "a,1733000000000,1733000001500"},
		code:   2,
		stderr: `time out of range: "1733000000000" (want seconds since the Unix epoch, 0 to 9223372036, with an optional fraction: 1700000000.25); it looks like milliseconds: 1733000000 seconds`,
	},
	{
		name:   "a negative time in --span",
		args:   []string{"emit-spans", "--span", "a,-1,2"},
		code:   2,
		stderr: `time out of range: "-1" (want seconds since the Unix epoch`,
	},
	{
		name:   "a mistyped command",
		args:   []string{"detet"},
		code:   2,
		stderr: `lens: unknown command "detet"; did you mean detect?`,
	},
	{
		name:   "a command's prefix",
		args:   []string{"task"},
		code:   2,
		stderr: `unknown command "task"; did you mean taskprolog?`,
	},
	{
		name:   "a mistyped subcommand",
		args:   []string{"carrier", "frmat"},
		code:   2,
		stderr: `lens carrier: unknown command "frmat"; did you mean format?`,
	},
	{
		name:   "help of a mistyped command",
		args:   []string{"help", "exce"},
		code:   2,
		stderr: `unknown command "exce"; did you mean exec?`,
	},
	{
		name:   "a mistyped flag",
		args:   []string{"exec", "--flush", "5s", "true"},
		code:   2,
		stderr: `lens exec: unknown flag --flush; did you mean --flush-timeout?`,
	},
	{
		name:   "a mistyped flag with its value",
		args:   []string{"detect", "--fromat=json"},
		code:   2,
		stderr: `unknown flag --fromat; did you mean --format?`,
	},
	{
		name:   "a mistyped root flag",
		args:   []string{"--verison"},
		code:   2,
		stderr: `lens: unknown flag --verison; did you mean --version?`,
	},
	{
		name:   "the version as a command",
		args:   []string{"version"},
		code:   2,
		stderr: `lens: unknown command "version"; did you mean --version?`,
	},
	{
		name:   "lens detect --only gpus without a driver",
		env:    environ.Map{"LENS_NVIDIA_PROCFS": "/nonexistent/gpus", "PATH": "/nonexistent"},
		args:   []string{"detect", "--only", "gpus"},
		stdout: "KEY  VALUE  TYPE\n",
		stderr: "lens detect: no GPU identity: no NVIDIA driver (no driver tree, no nvidia-smi)",
	},
	{
		name:   "nothing close",
		args:   []string{"frobnicate"},
		code:   2,
		stderr: `lens: unknown command "frobnicate"` + "\n",
	},
	{
		name:   "a rank that is not an integer",
		args:   []string{"resource", "--attr", "nv.dl.rank=abc"},
		code:   2,
		stderr: `invalid value "nv.dl.rank=abc" for flag --attr: nv.dl.rank must be a decimal integer, 0 or more`,
	},
	{
		name:   "a negative local rank",
		args:   []string{"exec", "--attr", "nv.dl.local_rank=-1", "true"},
		code:   2,
		stderr: `nv.dl.local_rank must be a decimal integer, 0 or more`,
	},
	{
		name:   "a world size of 0",
		args:   []string{"exec", "--attr", "nv.dl.world_size=0", "true"},
		code:   2,
		stderr: `nv.dl.world_size must be a decimal integer, 1 or more`,
	},
	{
		name:   "lens env outside a Slurm job",
		args:   []string{"env", "--stage", "sbatch"},
		stdout: "export OTEL_RESOURCE_ATTRIBUTES=''\n",
		stderr: "lens env: " + noSlurmJobNote + "\n",
	},
	{
		name:   "lens uuid job outside a Slurm job",
		args:   []string{"uuid", "job"},
		stdout: "d2badfc7-0e4c-537b-b4ea-8785f79f8679\n",
		stderr: `lens uuid job: note: no Slurm job id in the environment (SLURM_JOB_ID, or SLURM_ARRAY_JOB_ID in an array task): this is the UUID of "nemo.lens.job/nocluster/nojob", the same for every process outside a job`,
	},
}

func TestMessages(t *testing.T) {
	t.Parallel()
	for _, tc := range messageCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runIn(t, tc.env, "", tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) || tc.stdout != "" && r.stdout != tc.stdout {
				t.Errorf("lens %q:\n%v\nwant exit %d, stdout %q, stderr containing %q", tc.args, r, tc.code, tc.stdout, tc.stderr)
			}
		})
	}
	// lens taskprolog --help names the default policy's path, not "the
	// path below" of a text that names none.
	if r := runIn(t, nil, "", "taskprolog", "--help"); r.code != 0 || !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), "(default $LENS_TASKPROLOG_POLICY, then /etc/nemo-lens/taskprolog.conf)") {
		t.Errorf("lens taskprolog --help: %v, want the default policy's path", r)
	}
	// Inside a job, neither note.
	job := environ.Map{"SLURM_JOB_ID": "7"}
	for _, args := range [][]string{{"env", "--stage", "sbatch"}, {"uuid", "job"}} {
		if r := runIn(t, job, "", args...); r.code != 0 || r.stderr != "" {
			t.Errorf("lens %q in a job: %v, want no note", args, r)
		}
	}
}

// FuzzSuggest: whatever is typed, a suggestion names one of the
// candidates, within an edit distance of 2 or extending the typed prefix;
// the rows of messageCases seed it.
func FuzzSuggest(f *testing.F) {
	for _, tc := range messageCases {
		for _, a := range tc.args {
			f.Add(strings.TrimLeft(a, "-"))
		}
	}
	var names []string
	for _, c := range allCommands() {
		names = append(names, c.leaf())
	}
	f.Fuzz(func(t *testing.T, typed string) {
		got := suggest(typed, names, "--")
		if got == "" {
			return
		}
		name, ok := strings.CutPrefix(got, "; did you mean --")
		name, ok2 := strings.CutSuffix(name, "?")
		word, _, _ := strings.Cut(typed, "=")
		if !ok || !ok2 || (editDistance(word, name) > 2 && !strings.HasPrefix(name, word)) {
			t.Errorf("suggest(%q) = %q", typed, got)
		}
		found := false
		for _, n := range names {
			found = found || n == name
		}
		if !found {
			t.Errorf("suggest(%q) = %q: not a candidate", typed, got)
		}
	})
}
