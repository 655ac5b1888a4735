package detect_test

import (
	"context"
	"testing"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
)

// m builds an expected map from alternating keys and values; a value is a
// string or an int.
func m(kv ...any) *attr.Map {
	out := &attr.Map{}
	for i := 0; i+1 < len(kv); i += 2 {
		k := kv[i].(string)
		switch v := kv[i+1].(type) {
		case string:
			out.Set(k, attr.String(v))
		case int:
			out.Set(k, attr.Int(v))
		default:
			panic("m: unsupported value type")
		}
	}
	return out
}

// job1 is the head of every derived map for SLURM_JOB_ID=1 outside an
// array, with the given middle keys and the job uuid for nocluster/1.
func job1(middle ...any) *attr.Map {
	kv := []any{
		"slurm.job.id", "1", "slurm.job.id.raw", "1", "slurm.array.job_id", "1",
		"slurm.array.task_id", "0",
	}
	kv = append(kv, middle...)
	kv = append(kv, "nv.dl.job.uuid", "e3bf9abd-3253-57f5-829f-504e707f670b")
	return m(kv...)
}

// slurmCases are the derived cases of docs/detection.md#detect-slurm beyond
// the vectors.
// They also seed FuzzDetect.
var slurmCases = []struct {
	name string
	env  map[string]string
	want *attr.Map
}{
	{
		name: "SLURM_STEPID suppresses the head node",
		env:  map[string]string{"SLURM_JOB_ID": "1", "SLURMD_NODENAME": "n1", "SLURM_STEPID": "3"},
		want: job1("slurm.array.count", 1, "slurm.restart_count", 0),
	},
	{
		name: "empty SLURM_STEP_ID and SLURM_STEPID do not",
		env:  map[string]string{"SLURM_JOB_ID": "1", "SLURMD_NODENAME": "n1", "SLURM_STEP_ID": "", "SLURM_STEPID": ""},
		want: job1("slurm.array.count", 1, "slurm.restart_count", 0, "slurm.head_node.name", "n1"),
	},
	{
		name: "SLURM_PARTITION fallback",
		env:  map[string]string{"SLURM_JOB_ID": "1", "SLURM_JOB_PARTITION": "", "SLURM_PARTITION": "p2"},
		want: job1("slurm.array.count", 1, "slurm.partition", "p2", "slurm.restart_count", 0),
	},
	{
		name: "SLURM_JOB_PARTITION wins",
		env:  map[string]string{"SLURM_JOB_ID": "1", "SLURM_JOB_PARTITION": "debug", "SLURM_PARTITION": "p2"},
		want: job1("slurm.array.count", 1, "slurm.partition", "debug", "slurm.restart_count", 0),
	},
	{
		name: "sluid sources",
		env: map[string]string{"SLURM_JOB_ID": "1", "LENS_SLURM_SLUID": "", "NV_LAUNCH_SLUID": "s-nv",
			"LENS_SLURM_ARRAY_SLUID": "as-lens", "NV_LAUNCH_ARRAY_SLUID": "as-nv"},
		want: job1("slurm.array.count", 1, "slurm.sluid", "s-nv", "slurm.array.sluid", "as-lens", "slurm.restart_count", 0),
	},
	{
		name: "values are not trimmed and whitespace counts as non-empty",
		env:  map[string]string{"SLURM_JOB_ID": " ", "SLURM_JOB_NAME": " train ", "SLURM_NTASKS": " 4 "},
		want: m("slurm.job.id", " ", "slurm.job.id.raw", " ", "slurm.array.job_id", " ", "slurm.array.task_id", "0",
			"slurm.array.count", 1, "slurm.job.name", " train ", "slurm.ntasks", 4, "slurm.restart_count", 0,
			"nv.dl.job.uuid", "ea1bcccf-2699-5f4a-b70c-6fae9a873317" /* Python uuid5(NAMESPACE_URL, "nemo.lens.job/nocluster/ ") */),
	},
	{
		name: "empty counts take their defaults",
		env:  map[string]string{"SLURM_JOB_ID": "1", "SLURM_ARRAY_TASK_COUNT": "", "SLURM_RESTART_COUNT": ""},
		want: job1("slurm.array.count", 1, "slurm.restart_count", 0),
	},
	{
		name: "first non-empty node count",
		env:  map[string]string{"SLURM_JOB_ID": "1", "SLURM_JOB_NUM_NODES": "", "SLURM_NNODES": "4"},
		want: job1("slurm.array.count", 1, "slurm.nnodes", 4, "slurm.restart_count", 0),
	},
	{
		name: "integers beyond int64 are invalid",
		env: map[string]string{"SLURM_JOB_ID": "1", "SLURM_JOB_NUM_NODES": "9223372036854775808",
			"SLURM_NTASKS": "9223372036854775807", "SLURM_RESTART_COUNT": "-9223372036854775809"},
		want: job1("slurm.array.count", 1, "slurm.ntasks", 9223372036854775807),
	},
	{
		name: "strict rule on local integers",
		env:  map[string]string{"SLURM_JOB_ID": "1", "SLURM_NTASKS": "+007", "SLURM_ARRAY_TASK_COUNT": "٣", "SLURM_RESTART_COUNT": "1e3"},
		want: job1("slurm.ntasks", 7),
	},
	{
		name: "all string keys in emission order",
		env: map[string]string{"SLURM_JOB_ID": "1", "SLURMD_NODENAME": "h", "SLURM_TOPOLOGY_ADDR_PATTERN": "node",
			"SLURM_TOPOLOGY_ADDR": "a", "SLURM_SEGMENT": "s", "SLURM_JOB_RESERVATION": "r", "SLURM_JOB_QOS": "q",
			"SLURM_JOB_ACCOUNT": "acc", "SLURM_JOB_USER": "u", "SLURM_CLUSTER_NAME": "", "SLURM_JOB_NAME": "n"},
		want: job1("slurm.array.count", 1, "slurm.job.name", "n", "slurm.restart_count", 0, "slurm.job.user", "u",
			"slurm.job.account", "acc", "slurm.job.qos", "q", "slurm.job.reservation", "r", "slurm.segment", "s",
			"slurm.topology.addr", "a", "slurm.topology.addr_pattern", "node", "slurm.head_node.name", "h"),
	},
	{
		name: "carrier duplicates: the last (empty) value is dropped",
		env:  map[string]string{"SLURM_JOB_ID": "1", "OTEL_RESOURCE_ATTRIBUTES": "slurm.job.id=a,slurm.job.id="},
		want: job1("slurm.array.count", 1, "slurm.restart_count", 0),
	},
	{
		name: "carrier keys are trimmed by the parser, values stay",
		env:  map[string]string{"OTEL_RESOURCE_ATTRIBUTES": " slurm.job.name = %20x%20 ,slurm.segment=%2C"},
		want: m("slurm.job.name", " x ", "slurm.segment", ","),
	},
	{
		name: "carrier integer beyond int64 falls back",
		env:  map[string]string{"SLURM_JOB_ID": "1", "SLURM_NTASKS": "2", "OTEL_RESOURCE_ATTRIBUTES": "slurm.ntasks=99999999999999999999"},
		want: job1("slurm.array.count", 1, "slurm.ntasks", 2, "slurm.restart_count", 0),
	},
	{
		name: "retired and foreign keys with a job",
		env: map[string]string{"SLURM_JOB_ID": "1", "SLURM_NODELIST": "n[1-2]",
			"OTEL_RESOURCE_ATTRIBUTES": "slurm.nodelist=n1,slurm.cluster=c,host.name=h,nv.dl.rank=3"},
		want: job1("slurm.array.count", 1, "slurm.restart_count", 0),
	},
	{
		name: "carrier run uuid without a job",
		env:  map[string]string{"OTEL_RESOURCE_ATTRIBUTES": "nv.dl.run.uuid=r1"},
		want: m("nv.dl.run.uuid", "r1"),
	},
	{
		name: "only invalid carrier values do not activate",
		env:  map[string]string{"OTEL_RESOURCE_ATTRIBUTES": "slurm.nnodes=x,slurm.job.id=", "SLURM_ARRAY_TASK_ID": "1"},
		want: m(),
	},
	{
		// The salloc shell, as Slurm 22.05 sets it: job-level variables only.
		name: "salloc shell",
		env: map[string]string{"SLURM_JOB_ID": "12", "SLURM_JOBID": "12", "SLURM_JOB_NAME": "interactive",
			"SLURM_JOB_NODELIST": "localhost", "SLURM_JOB_NUM_NODES": "1", "SLURM_NNODES": "1", "SLURM_NTASKS": "2",
			"SLURM_JOB_PARTITION": "debug", "SLURM_CLUSTER_NAME": "probe", "SLURM_SUBMIT_HOST": "vm"},
		want: m("slurm.job.id", "12", "slurm.job.id.raw", "12", "slurm.array.job_id", "12", "slurm.array.task_id", "0",
			"slurm.array.count", 1, "slurm.job.name", "interactive", "slurm.cluster.name", "probe",
			"slurm.partition", "debug", "slurm.nnodes", 1, "slurm.ntasks", 2, "slurm.restart_count", 0,
			"nv.dl.job.uuid", "20ac1e80-62b1-5b9d-acf2-c86e9b65c4a3"),
	},
	{
		// The highest task of an array (Slurm 22.05) has SLURM_JOB_ID ==
		// SLURM_ARRAY_JOB_ID; array mode still applies
		// (docs/detection.md#slurm-array-mode).
		name: "highest array task",
		env: map[string]string{"SLURM_JOB_ID": "4", "SLURM_ARRAY_JOB_ID": "4", "SLURM_ARRAY_TASK_ID": "2",
			"SLURM_ARRAY_TASK_COUNT": "3", "SLURM_CLUSTER_NAME": "probe"},
		want: m("slurm.job.id", "4_2", "slurm.job.id.raw", "4", "slurm.array.job_id", "4", "slurm.array.task_id", "2",
			"slurm.array.count", 3, "slurm.cluster.name", "probe", "slurm.restart_count", 0,
			"nv.dl.job.uuid", "30bf83a8-4d23-5832-be38-968b17ec0fe9"),
	},
}

func TestDetectSlurmDerived(t *testing.T) {
	for _, c := range slurmCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := detect.Slurm(context.Background(), detect.WithEnv(environ.Map(c.env)))
			if !got.Equal(c.want) {
				t.Errorf("DetectSlurm(%v)\n got %v\nwant %v", c.env, got, c.want)
			}
		})
	}
}

func TestDetectSlurmNilEnvReadsProcess(t *testing.T) {
	// The zero Options must not panic and must read the live environment;
	// whatever it finds, integer keys are int64.
	got := detect.Slurm(context.Background())
	for k, v := range got.All() {
		switch k {
		case "slurm.array.count", "slurm.nnodes", "slurm.ntasks", "slurm.restart_count":
			if v.Kind() != attr.KindInt64 {
				t.Errorf("%s is %v", k, v.Kind())
			}
		}
	}
}
