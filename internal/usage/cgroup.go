package usage

import (
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nemolens/lens-go/internal/bounded"
)

// maxCgroupFile bounds what lens reads of a cgroup file: /proc/PID/cgroup,
// cgroup.procs (a longer one lists more than one process) and memory.peak.
const maxCgroupFile = 64 << 10

// Cgroup is the cgroup v2 of one process that holds that process alone
// (docs/usage.md#cgroup).
type Cgroup struct {
	dir string
	pid int
}

// OwnCgroup returns the cgroup v2 of pid when pid is the only process in
// it (its cgroup.procs lists pid alone) and it has a memory.peak file (not
// the hierarchy's root; the memory controller enabled). root is the file
// system root under which /proc and /sys/fs/cgroup are read ("/" for the
// running system). Call it before pid starts any child: lens exec calls it
// with its own pid before it starts the command, which then joins it.
func OwnCgroup(root string, pid int) (*Cgroup, bool) {
	b, err := bounded.ReadFile(filepath.Join(root, "proc", strconv.Itoa(pid), "cgroup"), maxCgroupFile)
	if err != nil {
		return nil, false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		rel, ok := strings.CutPrefix(line, "0::")
		if !ok {
			continue
		}
		// A cgroup v2 path is absolute; anything else (" (deleted)", a
		// relative path outside a namespace) is not one to read.
		if !strings.HasPrefix(rel, "/") || path.Clean(rel) != rel || strings.Contains(rel, " ") {
			return nil, false
		}
		c := &Cgroup{dir: filepath.Join(root, "sys", "fs", "cgroup", filepath.FromSlash(rel)), pid: pid}
		if !c.alone() {
			return nil, false
		}
		if _, ok := c.readPeak(); !ok {
			return nil, false
		}
		return c, true
	}
	return nil, false
}

// MemoryPeak is the cgroup's memory.peak in bytes, when the cgroup still
// holds its process alone (the command and every descendant have exited
// and no other process was moved in).
func (c *Cgroup) MemoryPeak() (int64, bool) {
	if c == nil || !c.alone() {
		return 0, false
	}
	return c.readPeak()
}

// Dir is the cgroup's directory.
func (c *Cgroup) Dir() string { return c.dir }

// alone reports whether cgroup.procs lists the process alone.
func (c *Cgroup) alone() bool {
	b, err := bounded.ReadFile(filepath.Join(c.dir, "cgroup.procs"), maxCgroupFile) // longer: not alone
	if err != nil {
		return false
	}
	return strings.TrimSpace(string(b)) == strconv.Itoa(c.pid)
}

func (c *Cgroup) readPeak() (int64, bool) {
	b, err := bounded.ReadFile(filepath.Join(c.dir, "memory.peak"), maxCgroupFile)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// ForeignProc reports whether the proc file system at proc ("/proc" for the
// running system) belongs to another PID namespace than the process whose
// pid, in its own namespace, is pid: its "self" link names another number
// (a PID namespace entered without mounting its own /proc, `unshare --pid
// --fork` without --mount-proc). Its /proc/PID files then describe other
// processes, and lens reads none of them (docs/usage.md#pid-namespace).
// It returns the number "self" names; false when the link cannot be read
// (a tree made for a test): nothing then says it is another namespace's.
func ForeignProc(proc string, pid int) (self int, foreign bool) {
	link, err := os.Readlink(filepath.Join(proc, "self"))
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(link)
	if err != nil {
		return 0, false
	}
	return n, n != pid
}
