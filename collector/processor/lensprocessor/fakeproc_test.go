package lensprocessor

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// fakeProc is a fake procfs tree in a test's temporary directory.
type fakeProc struct {
	t    testing.TB
	root string
}

func newFakeProc(t testing.TB) *fakeProc {
	t.Helper()
	return &fakeProc{t: t, root: filepath.Join(t.TempDir(), "proc")}
}

// add writes /proc/<pid>/{stat,environ,cgroup}: stat with the parent's pid
// (field 4) and the start time (field 22) after a command name holding a
// space and a parenthesis, as real ones may; cgroup only when not empty.
func (f *fakeProc) add(pid, ppid int, start uint64, env map[string]string, cgroup string) {
	f.t.Helper()
	dir := filepath.Join(f.root, strconv.Itoa(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		f.t.Fatal(err)
	}
	fields := make([]string, 0, 50)
	fields = append(fields, "S", strconv.Itoa(ppid))
	for i := 5; i <= 21; i++ {
		fields = append(fields, "0")
	}
	fields = append(fields, strconv.FormatUint(start, 10))
	for i := 23; i <= 52; i++ {
		fields = append(fields, "7")
	}
	stat := fmt.Sprintf("%d (py thon) x) %s\n", pid, strings.Join(fields, " "))
	f.write(filepath.Join(dir, "stat"), stat)
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + env[k] + "\x00")
	}
	f.write(filepath.Join(dir, "environ"), b.String())
	if cgroup != "" {
		f.write(filepath.Join(dir, "cgroup"), cgroup)
	} else {
		f.write(filepath.Join(dir, "cgroup"), "0::/user.slice/user-0.slice/session-1.scope\n")
	}
}

func (f *fakeProc) write(path, text string) {
	f.t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fakeProc) remove(pid int) {
	f.t.Helper()
	if err := os.RemoveAll(filepath.Join(f.root, strconv.Itoa(pid))); err != nil {
		f.t.Fatal(err)
	}
}
