package slurm

import (
	"slices"
	"testing"
)

func TestCleanEnv(t *testing.T) {
	base := []string{
		"PATH=/usr/bin", "HOME=/root",
		"SLURM_JOB_ID=7", "SLURM_PARTITION=p", "SLURM_CONF=/old", "SLURMD_NODENAME=n",
		"SBATCH_PARTITION=p", "SRUN_DEBUG=3", "OTEL_RESOURCE_ATTRIBUTES=a=b",
		"TORCHELASTIC_RESTART_COUNT=1", "LENS_SLURM_SLUID=s", "LENS_SLURM_PORT=7000",
	}
	got := CleanEnv(base, "/state/etc/slurm.conf", "OTEL_RESOURCE_ATTRIBUTES=x=y", "HOME=/h")
	want := []string{"PATH=/usr/bin", "LENS_SLURM_PORT=7000", "SLURM_CONF=/state/etc/slurm.conf", "OTEL_RESOURCE_ATTRIBUTES=x=y", "HOME=/h"}
	if !slices.Equal(got, want) {
		t.Errorf("CleanEnv =\n %q\nwant\n %q", got, want)
	}
	if got := CleanEnv(base, ""); slices.ContainsFunc(got, func(s string) bool { return s == "SLURM_CONF=/old" }) {
		t.Errorf("CleanEnv kept the caller's SLURM_CONF: %q", got)
	}
}

func TestParseShowJob(t *testing.T) {
	out := "JobId=5 ArrayJobId=4 ArrayTaskId=0 JobName=arr.sh UserId=root(0) JobState=COMPLETED Reason=None Restarts=0 " +
		"NodeList=localhost BatchHost=localhost NumNodes=1 NumTasks=1 TRES=cpu=1,node=1 Command=/tmp/a b.sh WorkDir=/tmp\n" +
		"JobId=4 ArrayJobId=4 ArrayTaskId=2 JobName=arr.sh\n\n"
	jobs := ParseShowJob(out)
	if len(jobs) != 2 {
		t.Fatalf("got %d jobs", len(jobs))
	}
	j := jobs[0]
	for k, v := range map[string]string{
		"JobId": "5", "ArrayJobId": "4", "ArrayTaskId": "0", "UserId": "root(0)", "TRES": "cpu=1,node=1",
		"Command": "/tmp/a b.sh", "WorkDir": "/tmp", "NumTasks": "1", "BatchHost": "localhost",
	} {
		if j[k] != v {
			t.Errorf("%s = %q, want %q", k, j[k], v)
		}
	}
	if jobs[1]["ArrayTaskId"] != "2" {
		t.Errorf("second job: %v", jobs[1])
	}
}

func TestRecordFileName(t *testing.T) {
	env := map[string]string{"SLURM_JOB_ID": "12", "SLURM_STEP_ID": "1", "SLURM_PROCID": "3"}
	look := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	if got := RecordFileName("H", look); got != "H.12.1.3.json" {
		t.Errorf("step: %s", got)
	}
	delete(env, "SLURM_STEP_ID")
	delete(env, "SLURM_PROCID")
	if got := RecordFileName("a/b c", look); got != "a_b_c.12.batch.x.json" {
		t.Errorf("batch: %s", got)
	}
}

func TestAttrInt64(t *testing.T) {
	if n, ok := (Attr{Kind: "int64", Value: []byte("42")}).Int64(); !ok || n != 42 {
		t.Errorf("int64 42: %d %v", n, ok)
	}
	if _, ok := (Attr{Kind: "int64", Value: []byte(`"42"`)}).Int64(); ok {
		t.Error("a quoted number must not pass as an int64")
	}
	if _, ok := (Attr{Kind: "string", Value: []byte("42")}).Int64(); ok {
		t.Error("a string kind must not pass as an int64")
	}
}

// The options reach slurm-up.sh as its variables, after (and so over) the
// caller's; accounting is always stated, so an exported
// LENS_SLURM_ACCOUNTING=1 does not turn it on for a cluster without it.
func TestOptionsEnv(t *testing.T) {
	base := []string{"PATH=/usr/bin", "LENS_SLURM_PORT=7000", "LENS_SLURM_ACCOUNTING=1"}
	for _, tc := range []struct {
		o    Options
		want []string
	}{
		{Options{}, []string{"PATH=/usr/bin", "LENS_SLURM_PORT=7000", "LENS_SLURM_ACCOUNTING=0"}},
		{Options{Accounting: true, Port: 7040, ClusterName: "acct"}, []string{"PATH=/usr/bin", "LENS_SLURM_ACCOUNTING=1", "LENS_SLURM_PORT=7040", "LENS_SLURM_CLUSTER=acct"}},
	} {
		if got := CleanEnv(base, "", tc.o.env()...); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: %q, want %q", tc.o, got, tc.want)
		}
	}
}
