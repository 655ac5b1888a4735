// Package scalegen generates the inputs of the scale measurements: carrier
// texts and attribute maps with a given number of entries, value size and
// value shape, for the carrier, Detect and Setup scale benchmarks, the
// linearity driver (carrier/internal/lineardriver) and the scale-report
// driver in tools/scale, which scripts/scale-report.sh runs. It does not use
// package carrier, so that the inputs do not depend on the code they
// measure. Only tests, benchmarks and those drivers import it.
package scalegen

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nemolens/lens-go/attr"
)

// Case is one point of the scale benchmarks: Entries values of Size bytes
// (decoded) of one Shape.
type Case struct {
	Entries, Size int
	Shape         Shape
}

// String is the benchmark name of the case, e.g.
// "entries=1000/value=10B/shape=escaped" or "entries=10/value=16KiB/shape=plain".
func (c Case) String() string {
	size := fmt.Sprintf("%dB", c.Size)
	if c.Size >= 1<<10 {
		size = fmt.Sprintf("%dKiB", c.Size>>10)
	}
	return fmt.Sprintf("entries=%d/value=%s/shape=%s", c.Entries, size, c.Shape)
}

// Cases returns the scale benchmarks' cases for each shape: 1 to 10,000
// entries of 10 B, then 10 entries of 1 KiB, 16 KiB and 100 KiB.
func Cases(shapes ...Shape) []Case {
	var cases []Case
	for _, shape := range shapes {
		for _, n := range []int{1, 10, 100, 1000, 10000} {
			cases = append(cases, Case{n, 10, shape})
		}
		for _, size := range []int{1 << 10, 16 << 10, 100 << 10} {
			cases = append(cases, Case{10, size, shape})
		}
	}
	return cases
}

// Shape is the kind of value text a generator produces.
type Shape string

// The value shapes. Sizes are those of the decoded value (what Parse returns,
// what Format is given); the carrier text of an escaped value is longer.
const (
	// Plain values hold only unreserved characters (A-Z a-z 0-9 _ . - ~):
	// nothing to encode, nothing to decode.
	Plain Shape = "plain"
	// Escaped values repeat an 18-byte pattern in which 3 bytes need
	// escaping: "run.01-é/seed_784" ('é' is two bytes), carried as
	// "run.01-%C3%A9%2Fseed_784".
	Escaped Shape = "escaped"
	// BadEscape is Escaped with the %2F of every pattern replaced by the
	// invalid escape %zz, which decoding keeps as it is. The OpenTelemetry
	// Go SDK's parser gives up on such a value at its first invalid escape
	// and keeps it raw.
	BadEscape Shape = "badescape"
	// BadTail is Escaped followed by a lone '%' (a value such as "50%"): the
	// only invalid escape is at the very end.
	BadTail Shape = "badtail"
	// RawBytes is Escaped with a raw 0xFF byte (not UTF-8, possible in a Go
	// environment) after every '-'; decoding copies it verbatim.
	RawBytes Shape = "rawbytes"
)

// Shapes lists every shape, in a fixed order.
var Shapes = []Shape{Plain, Escaped, BadEscape, BadTail, RawBytes}

const (
	plainPattern   = "run.01-ea_seed_784"
	escapedPattern = "run.01-é/seed_784"
)

// EnvVar is the carrier variable.
const EnvVar = "OTEL_RESOURCE_ATTRIBUTES"

// MaxEnvCarrier is the longest carrier a child process can receive on
// Linux: one environment string ("OTEL_RESOURCE_ATTRIBUTES=" + value + NUL)
// is limited to MAX_ARG_STRLEN, 32 pages of 4 KiB (131,072 bytes), so the
// value can have 131,046 bytes. A longer one makes execve fail with E2BIG.
const MaxEnvCarrier = 32*4096 - 1 - len(EnvVar) - 1

// Value returns a decoded value of exactly size bytes (at least 1) of the
// given shape: Plain gives unreserved characters only, every other shape the
// Escaped pattern (3 bytes of 18 need escaping). The value never ends inside
// a multi-byte character.
func Value(size int, shape Shape) string {
	size = max(size, 1)
	pattern := escapedPattern
	if shape == Plain {
		pattern = plainPattern
	}
	s := strings.Repeat(pattern, size/len(pattern)+1)[:size]
	if s[len(s)-1] == "é"[0] { // cut between the two bytes of 'é'
		s = s[:len(s)-1] + "e"
	}
	return s
}

// Encode percent-encodes every byte of s except A-Z a-z 0-9 _ . - ~ with
// uppercase hex digits (Python's quote(s, safe="")). It is an independent,
// deliberately simple copy of the rule the carrier package implements.
func Encode(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) + len(s)/2)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// Encoded returns the carrier text of a value of the given size and shape:
// Encode(Value(size, shape)), then the shape's alteration.
func Encoded(size int, shape Shape) string {
	e := Encode(Value(size, shape))
	switch shape {
	case BadEscape:
		e = strings.ReplaceAll(e, "%2F", "%zz")
	case BadTail:
		e += "%"
	case RawBytes:
		e = strings.ReplaceAll(e, "-", "-\xff")
	}
	return e
}

// Key returns the i-th generated key, "nv.dl.key.NNNNNN".
func Key(i int) string {
	s := strconv.Itoa(i)
	if len(s) < 6 {
		s = strings.Repeat("0", 6-len(s)) + s
	}
	return "nv.dl.key." + s
}

// Text returns a carrier of n entries Key(i)=Encoded(size, shape).
func Text(n, size int, shape Shape) string {
	v := Encoded(size, shape)
	var b strings.Builder
	b.Grow(n * (len(v) + 18))
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(Key(i))
		b.WriteByte('=')
		b.WriteString(v)
	}
	return b.String()
}

// Map returns a map of n string entries Key(i): Value(size, shape).
func Map(n, size int, shape Shape) *attr.Map {
	v := attr.String(Value(size, shape))
	m := attr.WithCapacity(n)
	for i := range n {
		m.Set(Key(i), v)
	}
	return m
}

// TrimmedMap returns a map of n entries in which every fourth key is padded
// with spaces and trims to the key of an earlier entry, so that Format must
// merge names: " Key(i-1) " for i%4 == 3, Key(i) otherwise. Values as in Map.
func TrimmedMap(n, size int, shape Shape) *attr.Map {
	v := attr.String(Value(size, shape))
	m := attr.WithCapacity(n)
	for i := range n {
		if i%4 == 3 {
			m.Set(" "+Key(i-1)+"\t", v)
		} else {
			m.Set(Key(i), v)
		}
	}
	return m
}

// DupText returns a carrier of n segments in which every key occurs twice:
// the keys of the first half in order, then again in reverse order, and one
// malformed segment (no '=') in every eight.
func DupText(n, size int, shape Shape) string {
	v := Encoded(size, shape)
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		if i%8 == 7 {
			b.WriteString("malformed segment")
			continue
		}
		k := i
		if half := n / 2; i >= half {
			k = n - 1 - i
		}
		b.WriteString(Key(k))
		b.WriteByte('=')
		b.WriteString(v)
	}
	return b.String()
}

// Keys returns Key(from) … Key(from+n-1).
func Keys(from, n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = Key(from + i)
	}
	return keys
}

// DuplicateKeys returns a carrier in which each of n keys occurs twice
// (2n segments of 10-byte escaped values): Key(0) … Key(n-1), then the same
// keys in reverse order.
func DuplicateKeys(n int) string {
	v := Encoded(10, Escaped)
	var b strings.Builder
	b.Grow(2 * n * (len(v) + 18))
	for i := range 2 * n {
		if i > 0 {
			b.WriteByte(',')
		}
		k := i
		if i >= n {
			k = 2*n - 1 - i
		}
		b.WriteString(Key(k))
		b.WriteByte('=')
		b.WriteString(v)
	}
	return b.String()
}

// FullEnvCarrier returns a carrier of exactly MaxEnvCarrier bytes of short
// keys ("k0=1,k1=1,…", keys in base 36): the largest carrier a child can
// receive, 18,911 entries. The last value is padded with '1's to
// reach the length.
func FullEnvCarrier() string {
	var b strings.Builder
	b.Grow(MaxEnvCarrier)
	for i := 0; ; i++ {
		seg := "k" + strconv.FormatInt(int64(i), 36) + "=1"
		if i > 0 {
			seg = "," + seg
		}
		if b.Len()+len(seg) > MaxEnvCarrier {
			break
		}
		b.WriteString(seg)
	}
	b.WriteString(strings.Repeat("1", MaxEnvCarrier-b.Len()))
	return b.String()
}

// Worker returns the environment of the worker process that
// `lens exec --rank-from slurm` starts in SlurmTask: the task's
// environment with WorkerCarrier (the run id was already set).
func Worker() map[string]string {
	env := SlurmTask()
	env[EnvVar] = WorkerCarrier
	return env
}

// SlurmTask returns the environment of one srun task (rank 1234 of 10,000,
// local rank 2 of 8, on 1,250 nodes) of a batch job, with eight GPUs and
// the launcher's carrier: what `lens exec` and `lens env --stage task` see
// in a typical 10,000-rank job (see Worker for the process lens exec
// starts).
func SlurmTask() map[string]string {
	return map[string]string{
		"PATH":                        "/usr/bin:/bin",
		"HOSTNAME":                    "node-0155",
		"CUDA_VISIBLE_DEVICES":        "0,1,2,3,4,5,6,7",
		EnvVar:                        LauncherCarrier,
		"NEMO_LENS_RUN_ID":            "llama3-70b-pretrain-2026-12",
		"SLURMD_NODENAME":             "node-0155",
		"SLURM_CLUSTER_NAME":          "eos",
		"SLURM_CPUS_ON_NODE":          "224",
		"SLURM_GTIDS":                 "1232,1233,1234,1235,1236,1237,1238,1239",
		"SLURM_JOBID":                 "4242001",
		"SLURM_JOB_ID":                "4242001",
		"SLURM_JOB_NAME":              "llama3-70b",
		"SLURM_JOB_NODELIST":          "node-[0001-1250]",
		"SLURM_JOB_NUM_NODES":         "1250",
		"SLURM_JOB_PARTITION":         "batch",
		"SLURM_JOB_USER":              "alice",
		"SLURM_LOCALID":               "2",
		"SLURM_NNODES":                "1250",
		"SLURM_NODEID":                "154",
		"SLURM_NODELIST":              "node-[0001-1250]",
		"SLURM_NPROCS":                "10000",
		"SLURM_NTASKS":                "10000",
		"SLURM_PROCID":                "1234",
		"SLURM_STEPID":                "0",
		"SLURM_STEP_ID":               "0",
		"SLURM_STEP_NODELIST":         "node-[0001-1250]",
		"SLURM_STEP_NUM_NODES":        "1250",
		"SLURM_STEP_NUM_TASKS":        "10000",
		"SLURM_TASKS_PER_NODE":        "8(x1250)",
		"SLURM_TOPOLOGY_ADDR":         "node-0155",
		"SLURM_TOPOLOGY_ADDR_PATTERN": "node",
	}
}

// LauncherCarrier is the carrier a typical 10,000-rank Slurm job's launcher
// hands its tasks (19 entries, 516 bytes): the job-level Slurm attributes
// and job UUID of `lens env --stage sbatch`, the run and the model's
// parallelism, the container image, the role and the user's deployment
// labels.
const LauncherCarrier = "slurm.job.id=4242001,slurm.job.id.raw=4242001,slurm.array.job_id=4242001," +
	"slurm.array.task_id=0,slurm.array.count=1,slurm.cluster.name=eos,slurm.nnodes=1250," +
	"nv.dl.job.uuid=6f1c2a9e-3b4d-5e8f-9a0b-1c2d3e4f5a6b," +
	"nv.dl.launch.container.image=nvcr.io%2Fnvidia%2Fnemo%3A25.04,nv.dl.provider.name=mcore," +
	"nv.dl.role=trainer,nv.dl.topology.size.tp=8,nv.dl.topology.size.pp=4,nv.dl.topology.size.dp=312," +
	"deployment.environment=prod,nemo.user.id=alice,wandb.project=llama3," +
	"nemo.run.id=llama3-70b-pretrain-2026-12,service.name=nemo"

// WorkerCarrier is LauncherCarrier with the ranks `lens exec --rank-from
// slurm` adds for rank 1234 of 10,000 (local rank 2): 22 entries, 574 bytes.
const WorkerCarrier = LauncherCarrier + ",nv.dl.rank=1234,nv.dl.world_size=10000,nv.dl.local_rank=2"
