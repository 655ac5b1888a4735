package lensprocessor

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/bounded"
	"github.com/nemolens/lens-go/internal/usage"
)

// procFS reads the processes of one procfs mount.
type procFS struct {
	root       string
	maxEnviron int
	// open opens a file of the tree (nil: bounded.Open, which never
	// blocks and refuses all but a regular file); tests inject
	// failures (EACCES, which root never gets) through it.
	open func(path string) (*os.File, error)
}

// readBounded reads at most limit bytes of the regular file path;
// truncated says that the file holds more.
func (p procFS) readBounded(path string, limit int) (data []byte, truncated bool, err error) {
	open := p.open
	if open == nil {
		open = bounded.Open
	}
	f, err := open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, false, err
	}
	if len(data) > limit {
		return data[:limit], true, nil
	}
	return data, false, nil
}

func (p procFS) path(pid int, name string) string {
	return filepath.Join(p.root, strconv.Itoa(pid), name)
}

// stat is what the processor takes from /proc/<pid>/stat.
type stat struct {
	ppid  int
	start uint64 // field 22: the start time in clock ticks since boot
}

// stat reads /proc/<pid>/stat: the parent's pid (field 4) and the start
// time (field 22). The command name (field 2) may hold spaces and
// parentheses, so the fields are counted after its last ')'.
func (p procFS) stat(pid int) (stat, error) {
	data, _, err := p.readBounded(p.path(pid, "stat"), 4096)
	if err != nil {
		return stat{}, err
	}
	return parseStat(data)
}

var errBadStat = errors.New("malformed /proc/<pid>/stat")

func parseStat(data []byte) (stat, error) {
	// Field 4 (ppid) is fields[1], field 22 (starttime) fields[19].
	fields := usage.StatFields(data)
	if len(fields) < 20 {
		return stat{}, errBadStat
	}
	ppid, err1 := strconv.Atoi(string(fields[1]))
	start, err2 := strconv.ParseUint(string(fields[19]), 10, 64)
	if err1 != nil || err2 != nil || ppid < 0 {
		return stat{}, errBadStat
	}
	return stat{ppid: ppid, start: start}, nil
}

// environ reads /proc/<pid>/environ (the environment the process was
// started with), at most maxEnviron bytes: past that the last, cut entry
// is dropped. A later duplicate wins, as in os/exec.
func (p procFS) environ(pid int) (environ.Map, error) {
	data, truncated, err := p.readBounded(p.path(pid, "environ"), p.maxEnviron)
	if err != nil {
		return nil, err
	}
	return parseEnviron(data, truncated), nil
}

func parseEnviron(data []byte, truncated bool) environ.Map {
	if truncated {
		if i := bytes.LastIndexByte(data, 0); i >= 0 {
			data = data[:i]
		} else {
			data = nil
		}
	}
	m := environ.Map{}
	for entry := range bytes.SplitSeq(data, []byte{0}) {
		if k, v, ok := bytes.Cut(entry, []byte{'='}); ok && len(k) > 0 {
			m[string(k)] = string(v)
		}
	}
	return m
}

// slurmCgroup is what Slurm's cgroup path says about a process
// (docs/collector.md#cgroup).
type slurmCgroup struct {
	jobID string // from job_<id>, "" when the job directory is a SLUID
	sluid string // the SLUID directory (Slurm 26.05's default)
	step  string // <id>, batch, extern, interactive
	task  string // task_<n>: the global task id (SLURM_PROCID); "" for task_special or none
}

func (c slurmCgroup) found() bool { return c.jobID != "" || c.sluid != "" }

// cgroupJob matches Slurm's job directory followed by its step directory:
// job_<id> (cgroup v1, and v2 with CgroupJobIdPaths=yes) or a SLUID ("s" and
// 13 Crockford base-32 characters), then step_<id>, then, after an optional
// user/ level, task_<n>.
var cgroupJob = regexp.MustCompile(`/(?:job_([0-9]+)|(s[0-9A-HJKMNP-TV-Z]{13}))/step_([0-9]+|batch|extern|interactive)(?:/user)?(?:/task_([0-9]+|special))?(?:/|$)`)

// cgroup reads /proc/<pid>/cgroup (readable without privilege) and finds
// Slurm's job, step and task in it.
func (p procFS) cgroup(pid int) (slurmCgroup, error) {
	data, _, err := p.readBounded(p.path(pid, "cgroup"), 64<<10)
	if err != nil {
		return slurmCgroup{}, err
	}
	return parseCgroup(data), nil
}

func parseCgroup(data []byte) slurmCgroup {
	for line := range bytes.SplitSeq(data, []byte{'\n'}) {
		// hierarchy-ID:controllers:path
		parts := bytes.SplitN(line, []byte{':'}, 3)
		if len(parts) != 3 {
			continue
		}
		m := cgroupJob.FindSubmatch(parts[2])
		if m == nil {
			continue
		}
		c := slurmCgroup{jobID: string(m[1]), sluid: string(m[2]), step: string(m[3])}
		if t := string(m[4]); t != "special" {
			c.task = t
		}
		return c
	}
	return slurmCgroup{}
}

// pids lists the numeric entries of the procfs root.
func (p procFS) pids() ([]int, error) {
	entries, err := os.ReadDir(p.root)
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(entries))
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out, nil
}
