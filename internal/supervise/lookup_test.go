//go:build unix

package supervise

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// candidateCases are execvp(3)'s candidates, written from its rules: a name
// with a slash as is; else each PATH entry, an empty one being the name
// alone. The rows also seed FuzzCandidates.
var candidateCases = []struct {
	name, path string
	want       []string
}{
	{"ls", "/bin:/usr/bin", []string{"/bin/ls", "/usr/bin/ls"}},
	{"ls", "", []string{"ls"}},
	{"ls", ":", []string{"ls", "ls"}},
	{"ls", "/bin:", []string{"/bin/ls", "ls"}},
	{"ls", ":/bin", []string{"ls", "/bin/ls"}},
	{"ls", "/a::/b", []string{"/a/ls", "ls", "/b/ls"}},
	{"ls", ".:bin", []string{"./ls", "bin/ls"}},
	{"ls", "/bin/", []string{"/bin/ls"}},
	{"./ls", "/bin", []string{"./ls"}},
	{"a/b", "/bin", []string{"a/b"}},
	{"/x/y", "", []string{"/x/y"}},
}

func TestCandidates(t *testing.T) {
	t.Parallel()
	for _, tc := range candidateCases {
		if got := Candidates(tc.name, tc.path); !slices.Equal(got, tc.want) {
			t.Errorf("Candidates(%q, %q) = %q, want %q", tc.name, tc.path, got, tc.want)
		}
	}
}

// FuzzCandidates: every candidate ends with the name; names with a slash
// are never searched; otherwise there is one candidate per PATH entry.
func FuzzCandidates(f *testing.F) {
	for _, tc := range candidateCases {
		f.Add(tc.name, tc.path)
	}
	f.Fuzz(func(t *testing.T, name, path string) {
		got := Candidates(name, path)
		if strings.Contains(name, "/") {
			if !slices.Equal(got, []string{name}) {
				t.Fatalf("Candidates(%q, %q) = %q", name, path, got)
			}
			return
		}
		if len(got) != strings.Count(path, ":")+1 {
			t.Fatalf("Candidates(%q, %q) = %q: want one per entry", name, path, got)
		}
		for _, c := range got {
			if c != name && !strings.HasSuffix(c, "/"+name) {
				t.Fatalf("candidate %q does not name %q", c, name)
			}
		}
	})
}

func TestLookupPath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{nil, DefaultPath},
		{[]string{"HOME=/h"}, DefaultPath},
		{[]string{"PATH="}, ""},
		{[]string{"PATH=/a", "PATH=/b"}, "/b"},
	} {
		if got := lookupPath(tc.env); got != tc.want {
			t.Errorf("lookupPath(%q) = %q, want %q", tc.env, got, tc.want)
		}
	}
}

// TestLookupStart drives the search with a start function that records
// what would be executed and fails as the kernel would.
func TestLookupStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mk := func(rel string, mode os.FileMode) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	exe := mk("b/cmd", 0o755)
	script := mk("s/cmd", 0o755)
	denied := mk("d/cmd", 0o755)
	if err := os.MkdirAll(filepath.Join(dir, "isdir", "cmd"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The kernel, as seen by execvp: script has no "#!", denied may not be
	// executed, anything else runs.
	kernel := func(tried *[][]string) startFunc {
		return func(file string, argv []string) (*os.Process, error) {
			*tried = append(*tried, append([]string{file}, argv...))
			switch file {
			case script:
				return nil, &os.PathError{Op: "fork/exec", Path: file, Err: syscall.ENOEXEC}
			case denied:
				return nil, &os.PathError{Op: "fork/exec", Path: file, Err: syscall.EACCES}
			}
			return &os.Process{Pid: 1}, nil
		}
	}
	for _, tc := range []struct {
		name, path string
		wantFile   string // "" when nothing starts
		wantErr    error
		wantStatus int
		wantTried  int
	}{
		{"found", filepath.Join(dir, "b"), exe, nil, 0, 1},
		{"directory then found", filepath.Join(dir, "isdir") + ":" + filepath.Join(dir, "b"), exe, nil, 0, 1},
		{"denied then found", filepath.Join(dir, "d") + ":" + filepath.Join(dir, "b"), exe, nil, 0, 2},
		{"denied only", filepath.Join(dir, "d"), "", syscall.EACCES, 126, 1},
		{"directory only", filepath.Join(dir, "isdir"), "", syscall.EACCES, 126, 0},
		{"missing", filepath.Join(dir, "none"), "", syscall.ENOENT, 127, 0},
		{"no shebang", filepath.Join(dir, "s"), shell, nil, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var tried [][]string
			_, file, err := lookupStart([]string{"cmd", "x"}, []string{"PATH=" + tc.path}, kernel(&tried))
			if file != tc.wantFile || !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Fatalf("lookupStart: file %q, err %v; want %q, %v", file, err, tc.wantFile, tc.wantErr)
			}
			if len(tried) != tc.wantTried {
				t.Errorf("tried %q, want %d starts", tried, tc.wantTried)
			}
			var se *StartError
			if err != nil && (!errors.As(err, &se) || se.Status() != tc.wantStatus) {
				t.Errorf("error %v: want a *StartError with status %d", err, tc.wantStatus)
			}
			if tc.wantFile == shell && !slices.Equal(tried[1], []string{shell, shell, script, "x"}) {
				t.Errorf("the script ran as %q, want /bin/sh SCRIPT x", tried[1])
			}
		})
	}
}

func TestStartErrorText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		e    StartError
		want string
	}{
		{StartError{Name: "x", Searched: true, Err: syscall.ENOENT}, "x: command not found"},
		{StartError{Name: "./x", Err: syscall.ENOENT}, "./x: No such file or directory"},
		{StartError{Name: "x", Searched: true, Err: syscall.EACCES}, "x: Permission denied"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%#v: %q, want %q", tc.e, got, tc.want)
		}
	}
}
