package usage

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// statRows are /proc/PID/stat lines and what parseStat reads from them;
// they also seed FuzzParseStat.
var statRows = []struct {
	name, line string
	ok         bool
	want       statFields
}{
	{"plain", "42 (python3) S 7 42 42 0 -1 4194560 100 0 0 0 250 30 5 2 20 0 3 0 100 1000000 1234 18446744073709551615", true,
		statFields{ppid: 7, utime: 250, stime: 30, cutime: 5, cstime: 2, rssPages: 1234}},
	{"name with spaces and parentheses", "43 (a) b (c)) R 42 43 43 0 -1 0 0 0 0 0 1 2 3 4 20 0 1 0 100 0 9 0", true,
		statFields{ppid: 42, utime: 1, stime: 2, cutime: 3, cstime: 4, rssPages: 9}},
	{"truncated", "44 (x) S 1 44 44 0", false, statFields{}},
	// Mutant tree.go:45 `len(f) < 22` as `<=`: 22 fields after ')' end at
	// rss (field 24), all parseStat reads.
	{"exactly 22 fields", "45 (x) S 7 45 45 0 -1 0 0 0 0 0 250 30 5 2 20 0 3 0 100 0 1234", true,
		statFields{ppid: 7, utime: 250, stime: 30, cutime: 5, cstime: 2, rssPages: 1234}},
	{"21 fields", "45 (x) S 7 45 45 0 -1 0 0 0 0 0 250 30 5 2 20 0 3 0 100 0", false, statFields{}},
	// Mutant tree.go:40 `i < 0` as `<=`: the fields follow a ')' at index 0.
	{"')' first", ") S 7 42 42 0 -1 0 0 0 0 0 250 30 5 2 20 0 3 0 100 0 1234 0", true,
		statFields{ppid: 7, utime: 250, stime: 30, cutime: 5, cstime: 2, rssPages: 1234}},
	{"no name", "44 x S 1", false, statFields{}},
}

func TestParseStat(t *testing.T) {
	t.Parallel()
	for _, r := range statRows {
		got, ok := parseStat([]byte(r.line))
		if ok != r.ok || got != r.want {
			t.Errorf("%s: parseStat = %+v, %v; want %+v, %v", r.name, got, ok, r.want, r.ok)
		}
	}
}

func FuzzParseStat(f *testing.F) {
	for _, r := range statRows {
		f.Add(r.line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		_, _ = parseStat([]byte(line)) // never panics
	})
}

// TestReadTree: the tree of a fake /proc is the root and its descendants,
// not its parent nor an unrelated process.
func TestReadTree(t *testing.T) {
	t.Parallel()
	proc := t.TempDir()
	for pid, line := range map[string]string{
		"1":   "1 (init) S 0 1 1 0 -1 0 0 0 0 0 900 900 900 900 20 0 1 0 1 0 900 0",
		"100": "100 (lens) S 1 100 100 0 -1 0 0 0 0 0 50 50 0 0 20 0 1 0 1 0 500 0",
		"101": "101 (torchrun) S 100 101 101 0 -1 0 0 0 0 0 100 20 10 5 20 0 1 0 1 0 1000 0",
		"102": "102 (python) R 101 101 101 0 -1 0 0 0 0 0 300 40 0 0 20 0 1 0 1 0 2000 0",
		"103": "103 (python) R 102 101 101 0 -1 0 0 0 0 0 200 10 0 0 20 0 1 0 1 0 3000 0",
		"200": "200 (other) R 1 200 200 0 -1 0 0 0 0 0 777 777 0 0 20 0 1 0 1 0 7000 0",
	} {
		if err := os.MkdirAll(filepath.Join(proc, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(proc, pid, "stat"), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ReadTree(proc, 101)
	if err != nil {
		t.Fatal(err)
	}
	page := int64(os.Getpagesize())
	want := Tree{User: float64(100+10+300+200) / 100, System: float64(20+5+40+10) / 100, RSS: 6000 * page, Processes: 3}
	if got != want {
		t.Errorf("ReadTree = %+v, want %+v", got, want)
	}
	if got, _ := ReadTree(proc, 999); got.Processes != 0 {
		t.Errorf("ReadTree of a missing pid = %+v", got)
	}
}

// TestReadTreeLive: this process, read from the real /proc, uses memory.
func TestReadTreeLive(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	t.Parallel()
	got, err := ReadTree("/proc", os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if got.Processes < 1 || got.RSS <= 0 {
		t.Errorf("ReadTree(self) = %+v", got)
	}
}

// TestOwnCgroup: the cgroup counts only when cgroup.procs lists the
// process alone, at the start and when memory.peak is read.
func TestOwnCgroup(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("proc/10/cgroup", "0::/job/task_0\n")
	write("sys/fs/cgroup/job/task_0/cgroup.procs", "10\n")
	write("sys/fs/cgroup/job/task_0/memory.peak", "1048576\n")
	c, ok := OwnCgroup(root, 10)
	if !ok {
		t.Fatal("OwnCgroup: not own")
	}
	if n, ok := c.MemoryPeak(); !ok || n != 1<<20 {
		t.Errorf("MemoryPeak = %d, %v", n, ok)
	}
	// Another process moved in: no peak.
	write("sys/fs/cgroup/job/task_0/cgroup.procs", "10\n11\n")
	if n, ok := c.MemoryPeak(); ok {
		t.Errorf("MemoryPeak with another process in the cgroup = %d", n)
	}
	if _, ok := OwnCgroup(root, 10); ok {
		t.Error("OwnCgroup of a shared cgroup")
	}
	// A path escaping the hierarchy is refused.
	write("proc/12/cgroup", "0::/../../etc\n")
	if _, ok := OwnCgroup(root, 12); ok {
		t.Error("OwnCgroup accepted a path with ..")
	}
	var none *Cgroup
	if _, ok := none.MemoryPeak(); ok {
		t.Error("nil Cgroup has a peak")
	}
}
