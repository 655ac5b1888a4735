package taskprolog_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nemolens/lens-go/internal/taskprolog"
)

// policyRows are policy texts with what they parse to; they also seed
// FuzzParsePolicy.
var policyRows = []struct {
	name string
	text string
	want taskprolog.Policy
	errs []error // one per faulty line, in order
	line []int
	// warns are the warnings' errors, with their lines wline.
	warns []error
	wline []int
}{
	{name: "empty", text: "", want: taskprolog.Policy{}},
	{name: "comments and blanks", text: "# c\n\n   \t\n  # indented\n", want: taskprolog.Policy{}},
	{name: "full", text: "carrier = on\nranks = slurm\nservice_name =  a b  \nenv.NEMO_LENS_ENABLED=true\n" +
		"env.OTEL_EXPORTER_OTLP_ENDPOINT = http://c:4317/#x=y\nlog = /var/log/l.log\n",
		want: taskprolog.Policy{Ranks: "slurm", ServiceName: "a b", Log: "/var/log/l.log", Env: []taskprolog.Setting{
			{Name: "NEMO_LENS_ENABLED", Value: "true"}, {Name: "OTEL_EXPORTER_OTLP_ENDPOINT", Value: "http://c:4317/#x=y"}}}},
	{name: "crlf", text: "ranks = none\r\ncarrier = off\r\n", want: taskprolog.Policy{Ranks: "none", NoCarrier: true}},
	{name: "empty service name", text: "service_name =\n", want: taskprolog.Policy{}},
	{name: "no final newline", text: "ranks = slurm", want: taskprolog.Policy{Ranks: "slurm"}},
	{name: "bad values", text: "ranks = Slurm\ncarrier = yes\nlog = relative.log\n",
		errs: []error{taskprolog.ErrBadValue, taskprolog.ErrBadValue, taskprolog.ErrBadValue}, line: []int{1, 2, 3}},
	{name: "syntax, unknown, duplicate", text: "just words\nrank = slurm\nranks = slurm\nranks = none\nlog = /l\n",
		errs: []error{taskprolog.ErrSyntax, taskprolog.ErrUnknownKey, taskprolog.ErrDuplicate}, line: []int{1, 2, 4},
		want: taskprolog.Policy{Log: "/l"}},
	{name: "env names", text: "env.PATH = /x\nenv.OTEL_RESOURCE_ATTRIBUTES = a=1\nenv.NEMO_LENS_RUN_ID = r\nenv.OTEL_SERVICE_NAME = s\nenv.OTEL-X = 1\nenv. = 1\n",
		errs: slices.Repeat([]error{taskprolog.ErrBadValue}, 6), line: []int{1, 2, 3, 4, 5, 6}},
	{name: "NUL", text: "service_name = a\x00b\n", errs: []error{taskprolog.ErrNUL}, line: []int{1}},
	{name: "a value on the next line is not the value", text: "service_name =\n x\n",
		errs: []error{taskprolog.ErrSyntax}, line: []int{2}},
	{name: "log twice", text: "log = /a\nlog = /b\n", errs: []error{taskprolog.ErrDuplicate}, line: []int{2}, want: taskprolog.Policy{Log: "/a"}},
	{name: "env.NAME twice", text: "env.OTEL_X = 1\nenv.OTEL_Y = 2\nenv.OTEL_X = 1\n", errs: []error{taskprolog.ErrDuplicate}, line: []int{3}},
	{name: "same env name, other key", text: "env.OTEL_X = 1\nenv.OTEL_x = 2\n",
		want: taskprolog.Policy{Env: []taskprolog.Setting{{Name: "OTEL_X", Value: "1"}, {Name: "OTEL_x", Value: "2"}}}},
	{name: "size: exactly the limit", text: strings.Repeat("#", taskprolog.MaxPolicySize-1) + "\n"},
	{name: "size: one below the limit", text: "ranks = slurm\n" + strings.Repeat("#", taskprolog.MaxPolicySize-15) + "\n",
		want: taskprolog.Policy{Ranks: "slurm"}},
	{name: "size: one above the limit", text: strings.Repeat("#", taskprolog.MaxPolicySize) + "\n",
		errs: []error{taskprolog.ErrTooLarge}, line: []int{0}},
	{name: "quoted values and inline comments warn", text: "service_name = \"jobs\"\nenv.OTEL_A = 'x'\nenv.OTEL_B = 1 # one\nenv.OTEL_C = 2\t# two\n" +
		"env.OTEL_D = \"\nenv.OTEL_E = http://h/#frag\nenv.OTEL_F = \"a' \n",
		want: taskprolog.Policy{ServiceName: `"jobs"`, Env: []taskprolog.Setting{{Name: "OTEL_A", Value: "'x'"}, {Name: "OTEL_B", Value: "1 # one"},
			{Name: "OTEL_C", Value: "2\t# two"}, {Name: "OTEL_D", Value: `"`}, {Name: "OTEL_E", Value: "http://h/#frag"}, {Name: "OTEL_F", Value: `"a'`}}},
		warns: []error{taskprolog.ErrQuoted, taskprolog.ErrQuoted, taskprolog.ErrComment, taskprolog.ErrComment}, wline: []int{1, 2, 3, 4}},
	{name: "syslog and a per-user log", text: "syslog = /run/lens/log.sock\nlog = /var/log/nemo-lens/taskprolog.%u.log\n",
		want: taskprolog.Policy{Syslog: "/run/lens/log.sock", Log: "/var/log/nemo-lens/taskprolog.%u.log"}},
	{name: "syslog off", text: "syslog = off\n", want: taskprolog.Policy{Syslog: "off"}},
	{name: "syslog relative", text: "syslog = dev/log\nlog = /l\n", errs: []error{taskprolog.ErrBadValue}, line: []int{1},
		want: taskprolog.Policy{Log: "/l"}},
	{name: "binary garbage", text: "\x7fELF\x02\x01\x01\x00\n", errs: []error{taskprolog.ErrSyntax}, line: []int{1}},
}

func TestParsePolicy(t *testing.T) {
	t.Parallel()
	for _, r := range policyRows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			got, err := taskprolog.ParsePolicy("p.conf", []byte(r.text))
			var perrs []*taskprolog.PolicyError
			if err != nil {
				for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
					var pe *taskprolog.PolicyError
					if !errors.As(e, &pe) || pe.File != "p.conf" {
						t.Fatalf("error %v is not a *PolicyError of p.conf", e)
					}
					perrs = append(perrs, pe)
				}
			}
			if len(perrs) != len(r.errs) {
				t.Fatalf("errors %v, want %d", err, len(r.errs))
			}
			for i, pe := range perrs {
				if !errors.Is(pe, r.errs[i]) || pe.Line != r.line[i] {
					t.Errorf("error %d: %v (line %d), want %v on line %d", i, pe, pe.Line, r.errs[i], r.line[i])
				}
			}
			if len(got.Warnings) != len(r.warns) {
				t.Fatalf("warnings %v, want %d", got.Warnings, len(r.warns))
			}
			for i, w := range got.Warnings {
				var pe *taskprolog.PolicyError
				if !errors.As(w, &pe) || !errors.Is(w, r.warns[i]) || pe.Line != r.wline[i] || pe.File != "p.conf" {
					t.Errorf("warning %d: %v, want %v on line %d", i, w, r.warns[i], r.wline[i])
				}
			}
			if got.NoCarrier != r.want.NoCarrier || got.Ranks != r.want.Ranks || got.ServiceName != r.want.ServiceName ||
				got.Log != r.want.Log || got.Syslog != r.want.Syslog || !slices.Equal(got.Env, r.want.Env) {
				t.Errorf("got %+v, want %+v", got, r.want)
			}
		})
	}
}

// FuzzParsePolicy: any text parses without panicking; a faulty one gives
// only its log path; a clean one only names settings lens may set, with
// values that hold no NUL.
func FuzzParsePolicy(f *testing.F) {
	for _, r := range policyRows {
		f.Add([]byte(r.text))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := taskprolog.ParsePolicy("f", data)
		if err != nil {
			if p.NoCarrier || p.Ranks != "" || p.ServiceName != "" || p.Env != nil {
				t.Fatalf("a faulty policy gave %+v", p)
			}
			return
		}
		for _, w := range p.Warnings {
			var pe *taskprolog.PolicyError
			if !errors.As(w, &pe) || pe.Line < 1 || !(errors.Is(w, taskprolog.ErrQuoted) || errors.Is(w, taskprolog.ErrComment)) {
				t.Fatalf("warning %v", w)
			}
		}
		if len(data) > taskprolog.MaxPolicySize {
			t.Fatalf("a policy of %d bytes parsed", len(data))
		}
		for _, s := range p.Env {
			if !taskprolog.ValidName(s.Name) || slices.Contains(taskprolog.Managed, s.Name) ||
				!(strings.HasPrefix(s.Name, "OTEL_") || strings.HasPrefix(s.Name, "NEMO_LENS_")) || strings.ContainsRune(s.Value, 0) {
				t.Fatalf("setting %+v", s)
			}
		}
		if strings.ContainsRune(p.ServiceName, 0) || strings.ContainsRune(p.Log, 0) {
			t.Fatalf("NUL in %+v", p)
		}
	})
}

func TestLoadPolicy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := taskprolog.LoadPolicy(filepath.Join(dir, "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, []byte(strings.Repeat("#\n", taskprolog.MaxPolicySize)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := taskprolog.LoadPolicy(big); !errors.Is(err, taskprolog.ErrTooLarge) {
		t.Errorf("large file: %v, want ErrTooLarge", err)
	}
	// The size limit: a file of exactly MaxPolicySize bytes loads, one byte
	// more is too large.
	exact := filepath.Join(dir, "exact")
	if err := os.WriteFile(exact, []byte("ranks = slurm\n"+strings.Repeat("#", taskprolog.MaxPolicySize-15)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := taskprolog.LoadPolicy(exact); err != nil || p.Ranks != "slurm" {
		t.Errorf("a file of exactly %d bytes: %+v, %v; want it loaded", taskprolog.MaxPolicySize, p, err)
	}
	over := filepath.Join(dir, "over")
	if err := os.WriteFile(over, []byte(strings.Repeat("#", taskprolog.MaxPolicySize)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := taskprolog.LoadPolicy(over); !errors.Is(err, taskprolog.ErrTooLarge) {
		t.Errorf("a file of %d bytes: %v, want ErrTooLarge", taskprolog.MaxPolicySize+1, err)
	}
	ok := filepath.Join(dir, "ok")
	if err := os.WriteFile(ok, []byte("ranks = slurm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := taskprolog.LoadPolicy(ok); err != nil || p.Ranks != "slurm" {
		t.Errorf("LoadPolicy: %+v, %v", p, err)
	}
}

func TestExport(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, value, want string
		err               error
	}{
		{"A", `it's "q" $(x) ` + "`y` 100% \\ \r", "export A=it's \"q\" $(x) `y` 100% \\ \r\n", nil},
		{"EMPTY", "", "export EMPTY=\n", nil},
		{"N", "a\nb", "", taskprolog.ErrNewline},
		{"N", "\nab", "", taskprolog.ErrNewline},
		{"N", "ab\n", "", taskprolog.ErrNewline},
		{"Z", "\x00ab", "", taskprolog.ErrNUL},
		{"Z", "a\x00b", "", taskprolog.ErrNUL},
		{"1X", "s3cret", "", taskprolog.ErrName},
		{"X Y", "s3cret", "", taskprolog.ErrName},
		{"", "s3cret", "", taskprolog.ErrName},
	} {
		got, err := taskprolog.Export(c.name, c.value)
		if got != c.want || !errors.Is(err, c.err) {
			t.Errorf("Export(%q, %q) = %q, %v; want %q, %v", c.name, c.value, got, err, c.want, c.err)
		}
		var ve *taskprolog.ValueError
		if err != nil && (!errors.As(err, &ve) || ve.Name != c.name || strings.Contains(err.Error(), c.value)) {
			t.Errorf("Export(%q): error %v should be a *ValueError naming the variable, without its value", c.name, err)
		}
	}
}

func ExampleExport() {
	line, _ := taskprolog.Export("OTEL_SERVICE_NAME", `it's "train" $(no) 100%`)
	fmt.Print(line)
	_, err := taskprolog.Export("OTEL_SERVICE_NAME", "two\nlines")
	fmt.Println(err)
	// Output:
	// export OTEL_SERVICE_NAME=it's "train" $(no) 100%
	// OTEL_SERVICE_NAME not set: the value holds a newline, which ends a TaskProlog line
}

func ExampleLogPath() {
	fmt.Println(taskprolog.LogPath("/var/log/nemo-lens/taskprolog.%u.log", 1001))
	// Output:
	// /var/log/nemo-lens/taskprolog.1001.log
}

func ExampleParsePolicy() {
	p, err := taskprolog.ParsePolicy("taskprolog.conf", []byte("ranks = slurm\nservice_name = jobs\nenv.NEMO_LENS_ENABLED = true\n"))
	fmt.Println(p.Ranks, p.ServiceName, p.Env, err)
	_, err = taskprolog.ParsePolicy("taskprolog.conf", []byte("ranks = all\n"))
	fmt.Println(err)
	// Output:
	// slurm jobs [{NEMO_LENS_ENABLED true}] <nil>
	// policy taskprolog.conf:1: invalid value for ranks: "all" (want none or slurm)
}
