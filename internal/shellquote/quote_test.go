package shellquote_test

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/nemolens/lens-go/internal/shellquote"
)

// cases are the outputs of Python's shlex.quote for the same inputs; they
// also seed FuzzQuote.
var cases = []struct{ in, want string }{
	{"", "''"},
	{"abc", "abc"},
	{"a=1,b=%2C", "a=1,b=%2C"},
	{"A-Z_a.z/0:9@%+", "A-Z_a.z/0:9@%+"},
	{"x~y", "'x~y'"},
	{"a b", "'a b'"},
	{"it's", `'it'"'"'s'`},
	{"'", `''"'"''`},
	{`"`, `'"'`},
	{"$(touch x)", "'$(touch x)'"},
	{"`id`", "'`id`'"},
	{`back\slash`, `'back\slash'`},
	{"new\nline", "'new\nline'"},
	{"bang!", "'bang!'"},
	{"é", "'é'"},
	{"\xff\xfe", "'\xff\xfe'"},
	{"*?[]{}", "'*?[]{}'"},
}

func TestQuote(t *testing.T) {
	for _, tc := range cases {
		if got := shellquote.Quote(tc.in); got != tc.want {
			t.Errorf("Quote(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestQuoteShell reads every quoted case back through real shells.
func TestQuoteShell(t *testing.T) {
	for _, sh := range []string{"sh", "bash", "dash"} {
		path, err := exec.LookPath(sh)
		if err != nil {
			t.Logf("%s is not installed", sh)
			continue
		}
		for _, tc := range cases {
			out, err := exec.Command(path, "-c", "printf %s "+shellquote.Quote(tc.in)).Output()
			if err != nil {
				t.Fatalf("%s: %v", sh, err)
			}
			if string(out) != tc.in {
				t.Errorf("%s reads %s as %q, want %q", sh, shellquote.Quote(tc.in), out, tc.in)
			}
		}
	}
}

// unquote reads one POSIX shell word made of unquoted characters,
// '...' and "..." parts without expansions — the forms Quote produces.
func unquote(w string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(w); {
		switch c := w[i]; c {
		case '\'':
			j := strings.IndexByte(w[i+1:], '\'')
			if j < 0 {
				return "", fmt.Errorf("unterminated ' in %q", w)
			}
			b.WriteString(w[i+1 : i+1+j])
			i += j + 2
		case '"':
			j := strings.IndexByte(w[i+1:], '"')
			if j < 0 {
				return "", fmt.Errorf("unterminated \" in %q", w)
			}
			part := w[i+1 : i+1+j]
			if strings.ContainsAny(part, "$`\\!") {
				return "", fmt.Errorf("expansion in double quotes in %q", w)
			}
			b.WriteString(part)
			i += j + 2
		default:
			if !strings.ContainsRune("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-", rune(c)) {
				return "", fmt.Errorf("unquoted %q in %q", c, w)
			}
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}

func FuzzQuote(f *testing.F) {
	for _, tc := range cases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.IndexByte(s, 0) >= 0 {
			t.Skip("NUL cannot occur in a shell word")
		}
		q := shellquote.Quote(s)
		got, err := unquote(q)
		if err != nil {
			t.Fatalf("Quote(%q) = %q: %v", s, q, err)
		}
		if got != s {
			t.Errorf("Quote(%q) = %q reads back as %q", s, q, got)
		}
	})
}

func BenchmarkQuote(b *testing.B) {
	for _, in := range []string{
		"slurm.job.id=12345,slurm.job.name=train%2Cgpt,nv.dl.job.uuid=be34ba0f-41ed-5d53-84c1-e3f3dd25bfd7",
		"it's~a key=1,other=%7E",
	} {
		b.Run(fmt.Sprintf("len=%d", len(in)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = shellquote.Quote(in)
			}
		})
	}
}

func ExampleQuote() {
	fmt.Println(shellquote.Quote("slurm.job.id=12345,host.name=node-1"))
	fmt.Println(shellquote.Quote("nv.dl.launch.container.image=img%20x,it's=1"))
	fmt.Println(shellquote.Quote(""))
	// Output:
	// slurm.job.id=12345,host.name=node-1
	// 'nv.dl.launch.container.image=img%20x,it'"'"'s=1'
	// ''
}
