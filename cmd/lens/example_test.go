package main

import (
	"context"
	"os"
	"strings"

	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/environ"
)

func Example_carrierParse() {
	run(context.Background(), []string{"carrier", "parse"},
		strings.NewReader("a=1,b=x%2Cy, malformed ,a=3\n"), os.Stdout, os.Stderr, environ.Map{})
	// Output:
	// {"a":"3","b":"x,y"}
}

func Example_carrierFormat() {
	run(context.Background(), []string{"carrier", "format"},
		strings.NewReader(`{"nemo.run.id": "exp/1,seed=7", "nv.dl.rank": 3, "rate": 1.0, "on": true, "gone": null}`),
		os.Stdout, os.Stderr, environ.Map{})
	// Output:
	// nemo.run.id=exp%2F1%2Cseed%3D7,nv.dl.rank=3,rate=1.0,on=True
}

func Example_carrierExtend() {
	run(context.Background(), []string{"carrier", "extend", "--defaults", `{"b": "9", "c": "3"}`, "--overrides", `{"a": ""}`},
		strings.NewReader("a=1,b=2"), os.Stdout, os.Stderr, environ.Map{})
	// Output:
	// b=2,c=3,a=
}

func Example_detectSlurm() {
	env := environ.Map{
		"SLURM_JOB_ID":        "12350",
		"SLURM_ARRAY_JOB_ID":  "12345",
		"SLURM_ARRAY_TASK_ID": "7",
		"SLURM_CLUSTER_NAME":  "cluster-a",
		"SLURM_JOB_NUM_NODES": "4",
		carrier.EnvVar:        "slurm.job.name=train%2Cgpt",
	}
	run(context.Background(), []string{"detect", "--only", "slurm", "--format", "json"}, nil, os.Stdout, os.Stderr, env)
	// Output:
	// {"slurm.job.name":"train,gpt","slurm.job.id":"12345_7","slurm.job.id.raw":"12350","slurm.array.job_id":"12345","slurm.array.task_id":"7","slurm.array.count":1,"slurm.cluster.name":"cluster-a","slurm.nnodes":4,"slurm.restart_count":0,"nv.dl.job.uuid":"be34ba0f-41ed-5d53-84c1-e3f3dd25bfd7"}
}

func Example_uuid() {
	env := environ.Map{"SLURM_JOB_ID": "12345", "SLURM_CLUSTER_NAME": "cluster-a", "SLURM_RESTART_COUNT": "1"}
	run(context.Background(), []string{"uuid", "job"}, nil, os.Stdout, os.Stderr, env)
	run(context.Background(), []string{"uuid", "run"}, nil, os.Stdout, os.Stderr, env)
	run(context.Background(), []string{"uuid", "run", "--name"}, nil, os.Stdout, os.Stderr, env)
	// Output:
	// be34ba0f-41ed-5d53-84c1-e3f3dd25bfd7
	// be42db52-ed95-5653-b035-190f2392e702
	// nemo.lens.run/cluster-a/12345/sr1
}

func Example_env() {
	env := environ.Map{"SLURM_JOB_ID": "1", carrier.EnvVar: "it's=mine,slurm.job.id=launch"}
	run(context.Background(), []string{"env", "--stage", "sbatch"}, nil, os.Stdout, os.Stderr, env)
	// Output:
	// export OTEL_RESOURCE_ATTRIBUTES='it'"'"'s=mine,slurm.job.id=launch,slurm.job.id.raw=1,slurm.array.job_id=1,slurm.array.task_id=0,slurm.array.count=1,slurm.restart_count=0,nv.dl.job.uuid=e3bf9abd-3253-57f5-829f-504e707f670b'
}
