package detect_test

import (
	"context"
	"testing"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
)

// Rules that no other test pinned: each test below fails when its rule is
// broken by a one-line change (see docs/reliability.md#rules-that-no-test-pinned-before).

// TestSlurmJobIDArrayJobWithoutTaskID: slurm.job.id takes the array form
// "{SLURM_ARRAY_JOB_ID}_{SLURM_ARRAY_TASK_ID}" only in array mode (the
// variable SLURM_ARRAY_TASK_ID present); SLURM_ARRAY_JOB_ID alone leaves it
// SLURM_JOB_ID (while slurm.array.job_id takes SLURM_ARRAY_JOB_ID).
func TestSlurmJobIDArrayJobWithoutTaskID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		env           environ.Map
		jobID, arrayJ string
		taskID        string // "" means absent
	}{
		{"array-job-id-only", environ.Map{"SLURM_JOB_ID": "101", "SLURM_ARRAY_JOB_ID": "100"}, "101", "100", "0"},
		{"array-mode", environ.Map{"SLURM_JOB_ID": "101", "SLURM_ARRAY_JOB_ID": "100", "SLURM_ARRAY_TASK_ID": "3"}, "100_3", "100", "3"},
		{"task-id-only", environ.Map{"SLURM_JOB_ID": "101", "SLURM_ARRAY_TASK_ID": "3"}, "101", "101", "3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := detect.Slurm(context.Background(), detect.WithEnv(tc.env))
			for key, want := range map[string]string{"slurm.job.id": tc.jobID, "slurm.array.job_id": tc.arrayJ, "slurm.array.task_id": tc.taskID, "slurm.job.id.raw": "101"} {
				if v, _ := got.Get(key); !v.Equal(attr.String(want)) {
					t.Errorf("%s = %v, want %q", key, v, want)
				}
			}
		})
	}
}

// TestRunUUIDRunIDBeatsTorchelastic: outside Slurm the run UUID's name uses
// the run id when there is one, and TORCHELASTIC_RUN_ID only otherwise.
// The UUIDs are Python's uuid.uuid5(uuid.NAMESPACE_URL, name).
func TestRunUUIDRunIDBeatsTorchelastic(t *testing.T) {
	t.Parallel()
	env := environ.Map{"TORCHELASTIC_RUN_ID": "te-id", "TORCHELASTIC_RESTART_COUNT": "2"}
	for _, tc := range []struct {
		runID, name, uuid string
	}{
		{"r1", "nemo.lens.run/local/r1/te2", "572d739d-a482-575f-ac59-5ede45e4baed"},
		{"", "nemo.lens.run/local/te-id/te2", "65c026c4-f2a4-5317-ad46-65dbda3cee3e"},
	} {
		if name, ok := detect.RunUUIDName(env, tc.runID); !ok || name != tc.name {
			t.Errorf("RunUUIDName(run id %q) = %q, %v; want %q", tc.runID, name, ok, tc.name)
		}
		if id, ok := detect.RunUUID(env, tc.runID); !ok || id != tc.uuid {
			t.Errorf("RunUUID(run id %q) = %q, %v; want %q", tc.runID, id, ok, tc.uuid)
		}
	}
}

// TestNormalizeStringifiesStringFields: type reconstruction renders the
// non-string values of the string fields as the carrier would (True/False,
// base-10 integers, Python float repr), keeps strings and nulls, leaves
// unknown keys alone, and does not modify its input.
func TestNormalizeStringifiesStringFields(t *testing.T) {
	t.Parallel()
	in := attr.NewMap(
		attr.Entry{Key: "nv.dl.role", Value: attr.Bool(true)},
		attr.Entry{Key: "nv.dl.software.cuda", Value: attr.Int(12)},
		attr.Entry{Key: "nv.gpu.compute_capability", Value: attr.Float64(9)},
		attr.Entry{Key: "nv.gpu.driver_version", Value: attr.Float64(1e16)},
		attr.Entry{Key: "nv.gpu.model", Value: attr.String("H100")},
		attr.Entry{Key: "nv.dl.provider.name", Value: attr.Null()},
		attr.Entry{Key: "custom", Value: attr.Int(5)},
	)
	before := in.Clone()
	out, warned := detect.Normalize(in)
	want := attr.NewMap(
		attr.Entry{Key: "nv.dl.role", Value: attr.String("True")},
		attr.Entry{Key: "nv.dl.software.cuda", Value: attr.String("12")},
		attr.Entry{Key: "nv.gpu.compute_capability", Value: attr.String("9.0")},
		attr.Entry{Key: "nv.gpu.driver_version", Value: attr.String("1e+16")},
		attr.Entry{Key: "nv.gpu.model", Value: attr.String("H100")},
		attr.Entry{Key: "nv.dl.provider.name", Value: attr.Null()},
		attr.Entry{Key: "custom", Value: attr.Int(5)},
	)
	if !out.Equal(want) {
		t.Errorf("Normalize = %v, want %v", out, want)
	}
	if len(warned) != 0 {
		t.Errorf("warned %q", warned)
	}
	if !in.Equal(before) {
		t.Errorf("Normalize modified its input: %v", in)
	}
}
