package usage

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"

	"github.com/nemolens/lens-go/internal/bounded"
)

// Tree is what a live process tree uses, summed over its processes
// (docs/usage.md#metrics).
type Tree struct {
	// User and System are the CPU seconds of every process of the tree and
	// of the children each has waited for (utime + cutime, stime +
	// cstime of /proc/PID/stat).
	User, System float64
	// RSS is the summed resident set size in bytes (shared pages counted
	// once per process).
	RSS int64
	// Processes is the number of processes found.
	Processes int
}

// maxStat bounds what lens reads of /proc/PID/stat (a few hundred bytes).
const maxStat = 4096

// clockTicks is USER_HZ, the unit of the times of /proc/PID/stat: 100 on
// every Linux architecture lens is built for.
const clockTicks = 100

// statFields are the fields of /proc/PID/stat after the command name:
// state, ppid, and the ones Tree reads.
type statFields struct {
	ppid                         int
	utime, stime, cutime, cstime int64
	rssPages                     int64
}

// StatFields splits /proc/PID/stat after the command name, which may hold
// spaces and parentheses (the fields start after the last ')'): field n of
// proc(5) is StatFields(b)[n-3] — the state [0], the parent's pid [1], the
// start time [19]. It returns nil when b holds no ')'.
func StatFields(b []byte) [][]byte {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return bytes.Fields(b[i+1:])
}

// parseStat parses /proc/PID/stat (StatFields).
func parseStat(b []byte) (statFields, bool) {
	f := StatFields(b)
	if len(f) < 22 {
		return statFields{}, false
	}
	num := func(n int) int64 {
		v, err := strconv.ParseInt(string(f[n-3]), 10, 64)
		if err != nil {
			return 0
		}
		return v
	}
	return statFields{
		ppid: int(num(4)), utime: num(14), stime: num(15), cutime: num(16), cstime: num(17),
		rssPages: num(24),
	}, true
}

// ReadTree sums the usage of pid and its live descendants, read from
// <proc>/*/stat ("/proc" for the running system). A process that exits
// while the tree is read is left out.
func ReadTree(proc string, pid int) (Tree, error) {
	entries, err := os.ReadDir(proc)
	if err != nil {
		return Tree{}, err
	}
	stats := map[int]statFields{}
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil || p <= 0 {
			continue
		}
		b, err := bounded.ReadFile(filepath.Join(proc, e.Name(), "stat"), maxStat)
		if err != nil {
			continue
		}
		s, ok := parseStat(b)
		if !ok {
			continue
		}
		stats[p] = s
		children[s.ppid] = append(children[s.ppid], p)
	}
	var t Tree
	page := int64(os.Getpagesize())
	seen := map[int]bool{}
	for queue := []int{pid}; len(queue) > 0; queue = queue[1:] {
		p := queue[0]
		s, ok := stats[p]
		if !ok || seen[p] {
			continue
		}
		seen[p] = true
		t.Processes++
		t.User += float64(s.utime+s.cutime) / clockTicks
		t.System += float64(s.stime+s.cstime) / clockTicks
		t.RSS += s.rssPages * page
		queue = append(queue, children[p]...)
	}
	return t, nil
}
