package usage

import (
	"os"
	"path/filepath"
	"testing"
)

// writeFiles writes files (path relative to root, slash-separated: content)
// under root.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOwnCgroupPathAndPeak: only an absolute, clean cgroup v2 path without
// a space is read, and a memory.peak of 0 is one while a negative or
// unparsable one is not. Each row's cgroup directory (dir) holds the process
// alone, so only the path or the peak decides. Mutants: cgroup.go:36 either
// `||` as `&&` (a relative path, a path with `.`, a " (deleted)" one
// taken); cgroup.go:79 `err != nil || n < 0` as `&&` ("max" read as 0) and
// `n < 0` as `<=` (a peak of 0 refused).
func TestOwnCgroupPathAndPeak(t *testing.T) {
	t.Parallel()
	for _, r := range []struct {
		name, cgroup, dir, peak string
		ok                      bool
		want                    int64
	}{
		{"absolute", "0::/job/task_0", "job/task_0", "1048576\n", true, 1 << 20},
		{"after a v1 line", "12:memory:/x\n0::/job/task_0\n", "job/task_0", "7", true, 7},
		{"relative", "0::job/task_0", "job/task_0", "1048576\n", false, 0},
		{"not clean", "0::/job/./task_0", "job/task_0", "1048576\n", false, 0},
		{"trailing slash", "0::/job/task_0/", "job/task_0", "1048576\n", false, 0},
		{"deleted", "0::/job/task_0 (deleted)", "job/task_0 (deleted)", "1048576\n", false, 0},
		{"peak 0", "0::/job/task_0", "job/task_0", "0\n", true, 0},
		{"peak negative", "0::/job/task_0", "job/task_0", "-1\n", false, 0},
		{"peak max", "0::/job/task_0", "job/task_0", "max\n", false, 0},
		{"peak empty", "0::/job/task_0", "job/task_0", "", false, 0},
	} {
		root := t.TempDir()
		writeFiles(t, root, map[string]string{
			"proc/10/cgroup": r.cgroup,
			"sys/fs/cgroup/" + r.dir + "/cgroup.procs": "10\n",
			"sys/fs/cgroup/" + r.dir + "/memory.peak":  r.peak,
		})
		c, ok := OwnCgroup(root, 10)
		if ok != r.ok {
			t.Errorf("%s: OwnCgroup(%q) ok = %v, want %v", r.name, r.cgroup, ok, r.ok)
			continue
		}
		if !ok {
			continue
		}
		if n, ok := c.MemoryPeak(); !ok || n != r.want {
			t.Errorf("%s: MemoryPeak = %d, %v; want %d, true", r.name, n, ok, r.want)
		}
	}
}

// stat is a /proc/PID/stat line of pid with parent ppid and utime ticks.
func stat(pid, ppid, utime string) string {
	return pid + " (p) S " + ppid + " 1 1 0 -1 0 0 0 0 0 " + utime + " 0 0 0 20 0 1 0 1 0 1 0"
}

// TestReadTreeOddEntries: /proc entries that are not a positive pid are
// skipped without ending the scan, and a cycle of parents (a pid reused
// while /proc is read) neither loops nor ends the walk. Mutants: tree.go:73
// `err != nil || p <= 0` as `&&` ("-1" read) and `p <= 0` as `<` ("0"
// read); tree.go:74 `continue` as `break` (the scan ends at "-1", which
// sorts first); tree.go:94 `continue` as `break` (the walk ends at the
// process seen before).
func TestReadTreeOddEntries(t *testing.T) {
	t.Parallel()
	for _, r := range []struct {
		name      string
		stats     map[string]string // /proc entry: stat line
		pid       int
		processes int
		user      float64
	}{
		{"not a positive pid", map[string]string{
			"-1":   stat("-1", "101", "1000"),
			"0":    stat("0", "101", "2000"),
			"self": stat("101", "101", "4000"),
			"101":  stat("101", "1", "100"),
			"102":  stat("102", "101", "200"),
		}, 101, 2, 3},
		{"cycle", map[string]string{
			"101": stat("101", "102", "100"),
			"102": stat("102", "101", "200"),
			"103": stat("103", "101", "400"),
			"104": stat("104", "103", "800"),
		}, 101, 4, 15},
	} {
		proc := t.TempDir()
		files := map[string]string{}
		for name, line := range r.stats {
			files[name+"/stat"] = line
		}
		writeFiles(t, proc, files)
		got, err := ReadTree(proc, r.pid)
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		if got.Processes != r.processes || got.User != r.user {
			t.Errorf("%s: ReadTree = %+v, want %d processes, %v s user", r.name, got, r.processes, r.user)
		}
	}
}
