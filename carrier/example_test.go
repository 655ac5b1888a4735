package carrier_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/environ"
)

func ExampleParse() {
	m := carrier.Parse(" nv.dl.rank = 3 ,malformed,nemo.run.id=exp%2F1%2Cseed%3D7,nv.dl.rank=4")
	for k, v := range m.All() {
		fmt.Printf("%s=%q\n", k, v.AsString())
	}
	// Output:
	// nv.dl.rank="4"
	// nemo.run.id="exp/1,seed=7"
}

func ExampleFormat() {
	text, dropped := carrier.Format(attr.NewMap(
		attr.Entry{Key: "service.name", Value: attr.String("nv.dl.launch")},
		attr.Entry{Key: "slurm.job.name", Value: attr.String("train,comma")},
		attr.Entry{Key: "slurm.array.count", Value: attr.Int(4)},
		attr.Entry{Key: "rate", Value: attr.Float64(1e16)},
		attr.Entry{Key: "active", Value: attr.Bool(true)},
		attr.Entry{Key: "gone", Value: attr.Null()}, // omitted silently
		attr.Entry{Key: "bad,key", Value: attr.String("v")},
	))
	fmt.Println(text)
	for _, d := range dropped {
		fmt.Printf("dropped %q: key not carried: %v\n", d.Key, errors.Is(d.Err, carrier.ErrKeyNotCarried))
	}
	// Output:
	// service.name=nv.dl.launch,slurm.job.name=train%2Ccomma,slurm.array.count=4,rate=1e%2B16,active=True
	// dropped "bad,key": key not carried: true
}

func ExampleExtend() {
	inherited := "nv.dl.rank=1,launcher.id=abc,nv.dl.rank=2"
	text, _ := carrier.Extend(inherited,
		attr.NewMap(attr.Entry{Key: "nv.dl.role", Value: attr.String("worker")}),
		attr.NewMap(
			attr.Entry{Key: "nv.dl.rank", Value: attr.Int(3)},
			attr.Entry{Key: "launcher.id", Value: attr.Null()}, // hides the inherited key
		))
	fmt.Println(text)
	// Output:
	// nv.dl.role=worker,nv.dl.rank=3
}

func ExamplePublish() {
	// A MapEnv keeps the example deterministic; pass nil (or environ.OS{})
	// to publish on the process environment.
	env := environ.Map{carrier.EnvVar: "nv.dl.rank=0"}
	rank := func(n int) *attr.Map { return attr.NewMap(attr.Entry{Key: "nv.dl.rank", Value: attr.Int(n)}) }
	err := carrier.Publish(context.Background(), env, rank(1), func(ctx context.Context) error {
		fmt.Println("outer:", env[carrier.EnvVar])
		// Nested publications use the context the enclosing one passes in.
		err := carrier.Publish(ctx, env, rank(2), func(context.Context) error {
			fmt.Println("inner:", env[carrier.EnvVar])
			return nil
		})
		fmt.Println("after inner:", env[carrier.EnvVar])
		return err
	})
	fmt.Println("after outer:", env[carrier.EnvVar], err)
	// Output:
	// outer: nv.dl.rank=1
	// inner: nv.dl.rank=2
	// after inner: nv.dl.rank=1
	// after outer: nv.dl.rank=0 <nil>
}

func ExampleChildEnv() {
	// The parent's environment; without WithEnviron it is os.Environ().
	environ := []string{
		"PATH=/usr/bin",
		"SLURM_JOB_ID=4242",
		"OTEL_RESOURCE_ATTRIBUTES=nemo.run.id=exp%2F1,nv.dl.rank=0",
	}
	// ctx would carry the launcher's span: the child then gets its
	// TRACEPARENT and continues the trace.
	ctx := context.Background()
	cmd := exec.Command("python3", "-m", "train")
	env, err := carrier.ChildEnv(ctx, attr.NewMap(
		attr.Entry{Key: "nv.dl.rank", Value: attr.Int(1)},
		attr.Entry{Key: "nv.dl.role", Value: attr.String("worker")},
	), carrier.WithEnviron(environ))
	if err != nil {
		fmt.Println(err) // entries the carrier cannot hold; env is still usable
	}
	cmd.Env = env
	// cmd.Start() would now start the child with its own carrier and this
	// process's run id; the process environment is never touched.
	for _, kv := range cmd.Env {
		if strings.HasPrefix(kv, carrier.EnvVar+"=") || strings.HasPrefix(kv, "NEMO_LENS_RUN_ID=") {
			fmt.Println(kv)
		}
	}
	// Output:
	// NEMO_LENS_RUN_ID=4242
	// OTEL_RESOURCE_ATTRIBUTES=nemo.run.id=exp%2F1,nv.dl.rank=1,nv.dl.role=worker
}

func ExampleDecode() {
	fmt.Printf("%q\n", carrier.Decode("h%C3%A9llo%2C%20x+y%zz"))
	fmt.Printf("%+q\n", carrier.Decode("%E2%82|%ED%A0%80")) // maximal subparts
	// Output:
	// "héllo, x+y%zz"
	// "\ufffd|\ufffd\ufffd\ufffd"
}

func ExampleEncode() {
	fmt.Println(carrier.Encode("exp/1,seed=7 é~"))
	// Output:
	// exp%2F1%2Cseed%3D7%20%C3%A9~
}
