package rounds_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/rounds"
)

const (
	r1 = "aaaaaaaa-1111-5111-8111-111111111111"
	r2 = "22222222-2222-5222-8222-222222222222"
	r3 = "33333333-3333-5333-8333-333333333333"
)

const header = "nemo.lens.rounds/1\n"

// distinct returns n distinct rounds, oldest first.
func distinct(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("00000000-0000-5000-8000-%012x", i+1))
	}
	return out
}

// lines is a record of rs.
func lines(rs []string) string { return header + strings.Join(rs, "\n") + "\n" }

// parseTests are Parse's rows; they seed FuzzParse. line is the
// ParseError's line when bad (0: the whole file).
var parseTests = []struct {
	name string
	in   string
	want []string // nil and bad: an error
	bad  bool
	line int
}{
	{"empty record", header, nil, false, 0},
	{"two rounds", header + r1 + "\n" + r2 + "\n", []string{r1, r2}, false, 0},
	{"MaxRounds rounds", lines(distinct(rounds.MaxRounds)), distinct(rounds.MaxRounds), false, 0},
	{"MaxRounds-1 rounds", lines(distinct(rounds.MaxRounds - 1)), distinct(rounds.MaxRounds - 1), false, 0},
	{"MaxRounds+1 rounds: too long", lines(distinct(rounds.MaxRounds + 1)), nil, true, 0},
	{"MaxRounds+1 short lines", header + strings.Repeat("x\n", rounds.MaxRounds+1), nil, true, 2},
	{"no file content", "", nil, true, 1},
	{"other header", "nemo.lens.rounds/2\n" + r1 + "\n", nil, true, 1},
	{"no final newline", header + r1, nil, true, 2},
	{"upper case", header + strings.ToUpper(r1) + "\n", nil, true, 2},
	{"nil UUID: no trace", header + "00000000-0000-0000-0000-000000000000\n", nil, true, 2},
	{"no dashes", header + strings.ReplaceAll(r1, "-", "") + "\n", nil, true, 2},
	{"blank line", header + r1 + "\n\n", nil, true, 3},
	{"CRLF", header + r1 + "\r\n", nil, true, 2},
	{"a round twice", header + r1 + "\n" + r2 + "\n" + r1 + "\n", nil, true, 4},
	{"bad fourth line", header + r1 + "\n" + r2 + "\n" + r3 + "\nx\n", nil, true, 5},
	{"too many rounds", header + strings.Repeat(r1+"\n", rounds.MaxRounds+1), nil, true, 0},
	{"too long", header + strings.Repeat("x", 4096), nil, true, 0},
}

// TestParse pins the record's format (docs/tracing.md#round-links).
func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range parseTests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := rounds.Parse([]byte(tc.in))
			var pe *rounds.ParseError
			if tc.bad != (err != nil) || (err != nil && !errors.As(err, &pe)) {
				t.Fatalf("Parse error %v (%T), want bad %v", err, err, tc.bad)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Parse = %q, want %q", got, tc.want)
			}
			if err == nil {
				return
			}
			// The message names the line, or the record when the whole file is at fault.
			want := fmt.Sprintf("rounds record line %d: ", tc.line)
			if tc.line == 0 {
				want = "rounds record: "
			}
			if pe.Line != tc.line || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("Parse error %q at line %d, want line %d, %q…", err, pe.Line, tc.line, want)
			}
		})
	}
}

// TestNoteFullRecord: a record of MaxRounds rounds, the most a record
// holds and the longest Note reads, is used: the round before a new one is
// its newest, and the new one pushes out the oldest.
func TestNoteFullRecord(t *testing.T) {
	t.Parallel()
	dir := privateDir(t)
	full := distinct(rounds.MaxRounds + 1)
	writeRecord(t, dir, lines(full[:rounds.MaxRounds]))
	cur := full[rounds.MaxRounds]
	p, ok, err := rounds.Note(dir, "k", cur)
	if err != nil || !ok || p != full[rounds.MaxRounds-1] {
		t.Fatalf("Note(%s) = %q, %v, %v; want %q", cur, p, ok, err, full[rounds.MaxRounds-1])
	}
	b, err := os.ReadFile(rounds.File(dir, "k"))
	if err != nil || string(b) != lines(full[1:]) {
		t.Errorf("record after Note: %v, %d bytes, want the newest %d rounds", err, len(b), rounds.MaxRounds)
	}
}

// FuzzParse: Parse never panics, what it accepts Format writes back byte
// for byte, and a record never holds a round twice or more than MaxRounds.
func FuzzParse(f *testing.F) {
	for _, tc := range parseTests {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := rounds.Parse(b)
		if err != nil {
			return
		}
		if back := rounds.Format(got); string(back) != string(b) {
			t.Fatalf("Format(Parse(%q)) = %q", b, back)
		}
		if len(got) > rounds.MaxRounds || len(slices.Compact(slices.Sorted(slices.Values(got)))) != len(got) {
			t.Fatalf("Parse(%q) = %q: too many or repeated", b, got)
		}
	})
}

// TestFormatKeepsNewest: a record keeps the newest MaxRounds rounds.
func TestFormatKeepsNewest(t *testing.T) {
	t.Parallel()
	var in []string
	for i := range rounds.MaxRounds + 3 {
		in = append(in, fmt.Sprintf("00000000-0000-5000-8000-%012x", i))
	}
	got, err := rounds.Parse(rounds.Format(in))
	if err != nil || !slices.Equal(got, in[3:]) {
		t.Fatalf("Parse(Format(%d rounds)) = %d rounds, %v; want the newest %d", len(in), len(got), err, rounds.MaxRounds)
	}
}

// TestNote: the rounds of one node in order, as the processes of each
// round record them (docs/tracing.md#round-links).
func TestNote(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "nemo-lens")
	note := func(key, cur string) (string, bool) {
		t.Helper()
		p, ok, err := rounds.Note(dir, key, cur)
		if err != nil {
			t.Fatalf("Note(%s): %v", cur, err)
		}
		return p, ok
	}
	steps := []struct {
		key, cur, want string // want "": no previous round
	}{
		{"run", r1, ""},   // the first process of round 1
		{"run", r1, ""},   // another process of round 1
		{"run", r2, r1},   // round 2
		{"run", r2, r1},   // its second process, after the record has it
		{"run", r3, r2},   // round 3
		{"run", r1, ""},   // a late process of round 1 keeps its place
		{"run", r2, r1},   // and one of round 2
		{"other", r3, ""}, // another run: its own record
	}
	for i, s := range steps {
		p, ok := note(s.key, s.cur)
		if p != s.want || ok != (s.want != "") {
			t.Errorf("step %d: Note(%s, %s) = %q, %v; want %q", i, s.key, s.cur, p, ok, s.want)
		}
	}
	for _, path := range []string{dir, rounds.File(dir, "run")} {
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v, want owner-only", path, fi.Mode())
		}
	}
	b, err := os.ReadFile(rounds.File(dir, "run"))
	if err != nil || string(b) != header+r1+"\n"+r2+"\n"+r3+"\n" {
		t.Errorf("record %q, %v", b, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".rounds-*")); len(left) != 0 {
		t.Errorf("temporary files left: %q", left)
	}
}

// TestNoteUnusable: what cannot be used gives no previous round and says
// why; a record that is not one is replaced.
func TestNoteUnusable(t *testing.T) {
	t.Parallel()
	t.Run("bad round", func(t *testing.T) {
		t.Parallel()
		if _, ok, err := rounds.Note(t.TempDir(), "k", "R1"); ok || !errors.Is(err, rounds.ErrRound) {
			t.Errorf("Note = %v, %v; want no round, ErrRound", ok, err)
		}
	})
	t.Run("relative directory", func(t *testing.T) {
		t.Parallel()
		if _, ok, err := rounds.Note("nemo-lens", "k", r1); ok || err == nil {
			t.Errorf("Note = %v, %v; want no round, an error", ok, err)
		}
	})
	t.Run("directory cannot be made", func(t *testing.T) {
		t.Parallel()
		// XDG_RUNTIME_DIR naming a directory that is gone (a stale session).
		dir := filepath.Join(t.TempDir(), "gone", "nemo-lens")
		if _, ok, err := rounds.Note(dir, "k", r1); ok || !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Note = %v, %v; want no round, not exist", ok, err)
		}
	})
	// Open to others, or only to the group (break: private's 0o077 as
	// 0o007).
	for _, mode := range []os.FileMode{0o755, 0o750, 0o720} {
		t.Run(fmt.Sprintf("directory mode %#o", mode), func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "d")
			if err := os.Mkdir(dir, mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, mode); err != nil { // whatever the umask
				t.Fatal(err)
			}
			if _, ok, err := rounds.Note(dir, "k", r1); ok || !errors.Is(err, rounds.ErrUnsafe) {
				t.Errorf("Note = %v, %v; want no round, ErrUnsafe", ok, err)
			}
		})
	}
	t.Run("directory is a symlink", func(t *testing.T) {
		t.Parallel()
		base := t.TempDir()
		real := filepath.Join(base, "real")
		if err := os.Mkdir(real, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(real, filepath.Join(base, "d")); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := rounds.Note(filepath.Join(base, "d"), "k", r1); ok || !errors.Is(err, rounds.ErrUnsafe) {
			t.Errorf("Note = %v, %v; want no round, ErrUnsafe", ok, err)
		}
	})
	t.Run("record is a symlink", func(t *testing.T) {
		t.Parallel()
		dir := privateDir(t)
		target := filepath.Join(dir, "elsewhere")
		if err := os.WriteFile(target, []byte(header+r1+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, rounds.File(dir, "k")); err != nil {
			t.Fatal(err)
		}
		if p, ok, err := rounds.Note(dir, "k", r2); ok || err == nil {
			t.Errorf("Note = %q, %v, %v; want no round, an error", p, ok, err)
		}
	})
	// A record open to others or to the group is refused and left as it
	// is, not replaced (break: drop Note's early return on ErrUnsafe, or
	// private's 0o077 as 0o007).
	for _, mode := range []os.FileMode{0o644, 0o640, 0o620} {
		t.Run(fmt.Sprintf("record mode %#o", mode), func(t *testing.T) {
			t.Parallel()
			dir := privateDir(t)
			writeRecord(t, dir, header+r1+"\n")
			path := rounds.File(dir, "k")
			if err := os.Chmod(path, mode); err != nil {
				t.Fatal(err)
			}
			before, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if p, ok, err := rounds.Note(dir, "k", r2); ok || !errors.Is(err, rounds.ErrUnsafe) {
				t.Errorf("Note = %q, %v, %v; want no round, ErrUnsafe", p, ok, err)
			}
			after, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(path)
			if !os.SameFile(before, after) || after.Mode().Perm() != mode || string(b) != header+r1+"\n" {
				t.Errorf("the unsafe record was replaced or changed: same file %v, mode %#o, %q", os.SameFile(before, after), after.Mode().Perm(), b)
			}
		})
	}
	t.Run("not a record", func(t *testing.T) {
		t.Parallel()
		dir := privateDir(t)
		writeRecord(t, dir, "junk")
		var pe *rounds.ParseError
		if p, ok, err := rounds.Note(dir, "k", r2); ok || !errors.As(err, &pe) {
			t.Errorf("Note = %q, %v, %v; want no round, a ParseError", p, ok, err)
		}
		if p, ok, err := rounds.Note(dir, "k", r3); p != r2 || !ok || err != nil {
			t.Errorf("after the replacement: Note = %q, %v, %v; want %s", p, ok, err, r2)
		}
	})
	t.Run("unwritable directory", func(t *testing.T) {
		t.Parallel()
		if os.Getuid() == 0 {
			t.Skip("root writes anyway")
		}
		dir := privateDir(t)
		writeRecord(t, dir, header+r1+"\n")
		if err := os.Chmod(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
		// What the record tells is still told.
		if p, ok, err := rounds.Note(dir, "k", r2); p != r1 || !ok || err == nil {
			t.Errorf("Note = %q, %v, %v; want %s and the write's error", p, ok, err, r1)
		}
	})
}

// TestDir pins where the records are.
func TestDir(t *testing.T) {
	t.Parallel()
	uid := os.Getuid()
	own := t.TempDir()
	// A runtime directory of another user: root's "/" for a user; for root,
	// a directory given to nobody.
	other := "/"
	if uid == 0 {
		other = t.TempDir()
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	tmp := "/tmp/nemo-lens-" + strconv.Itoa(uid)
	for _, tc := range []struct {
		env  environ.Map
		want string
	}{
		{environ.Map{"XDG_RUNTIME_DIR": own, "TMPDIR": "/scratch"}, filepath.Join(own, "nemo-lens")},
		{environ.Map{"XDG_RUNTIME_DIR": other, "TMPDIR": "/scratch"}, "/scratch/nemo-lens-" + strconv.Itoa(uid)},
		{environ.Map{"XDG_RUNTIME_DIR": filepath.Join(own, "absent")}, filepath.Join(own, "absent", "nemo-lens")},
		{environ.Map{"XDG_RUNTIME_DIR": "run/user", "TMPDIR": "/scratch"}, "/scratch/nemo-lens-" + strconv.Itoa(uid)},
		{environ.Map{"TMPDIR": "relative"}, tmp},
		{environ.Map{}, tmp},
	} {
		if got := rounds.Dir(tc.env, uid); got != tc.want {
			t.Errorf("Dir(%v) = %q, want %q", tc.env, got, tc.want)
		}
	}
}

// privateDir returns a new owner-only directory.
func privateDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "d")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// writeRecord writes the record of key "k" under dir, mode 0600.
func writeRecord(t *testing.T, dir, text string) {
	t.Helper()
	if err := os.WriteFile(rounds.File(dir, "k"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
