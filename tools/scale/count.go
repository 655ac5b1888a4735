package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"runtime/debug"
	"slices"
	"time"

	lens "github.com/nemolens/lens-go"
	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/callgrind"
	"github.com/nemolens/lens-go/internal/scalegen"
)

// countInputs are the inputs of the callgrind measures.
type countInputs struct {
	text      string
	parsed    *attr.Map
	keys      []string
	detectEnv environ.Map
	env       environ.Map
}

func prepareCount(n int) *countInputs {
	text := scalegen.Text(n, 10, scalegen.Escaped)
	de := environ.Map(scalegen.SlurmTask())
	de[carrier.EnvVar] = scalegen.LauncherCarrier + "," + text
	parsed := carrier.Parse(text)
	return &countInputs{
		text:      text,
		parsed:    parsed,
		keys:      parsed.Keys(),
		detectEnv: de,
		env:       environ.Map{carrier.EnvVar: text, "CUDA_VISIBLE_DEVICES": "0,1,2,3"},
	}
}

var fixedDetect = []detect.Option{
	detect.WithHostname(func() (string, error) { return "node-0155", nil }),
	detect.WithPID(1234567),
	detect.WithKubernetesSecretsPath("/nonexistent"),
}

func opCountParse(in *countInputs) { sink += carrier.Parse(in.text).Len() }

func opCountFormat(in *countInputs) {
	s, dropped := carrier.Format(in.parsed)
	sink += len(s) + len(dropped)
}

// opCountCheck checks as the size table's "check" does: every key
// required, two forbidden, the duplicates searched in the text.
func opCountCheck(in *countInputs) {
	r := carrier.Check(in.parsed, in.keys, []string{"slurm.nodelist", scalegen.Key(0)}, in.text)
	sink += len(r.Missing) + len(r.Empty) + len(r.Forbidden) + len(r.Duplicates)
}

func opCountDetect(in *countInputs) {
	sink += detect.All(context.Background(), append([]detect.Option{detect.WithEnv(in.detectEnv)}, fixedDetect...)...).Len()
}

func opCountResource(in *countInputs) {
	m, err := lens.ResourceAttributes(context.Background(), lens.Config{RunID: "exp-1"},
		lens.WithEnv(in.env), lens.WithLogger(discardLogger), lens.WithDetectOptions(fixedDetect...))
	must(err)
	sink += m.Len()
}

func opCountSetup(in *countInputs) {
	ctx := context.Background()
	h, err := lens.Setup(ctx, enabledConfig(), setupOptions(lens.WithEnv(in.env), lens.WithDetectOptions(fixedDetect...))...)
	must(err)
	sink += h.Resource().Len()
	must(h.Shutdown(ctx))
}

// setupTypical is the Setup of a Go worker in a typical Slurm task: the
// configuration from its environment, traces and metrics to OTLP/gRPC (the
// exporters are built; nothing connects during Setup), the globals
// installed. It returns the handle, to be shut down outside the measure.
func setupTypical() *lens.Handle {
	env := environ.Map(scalegen.Worker())
	cfg, err := lens.FromEnv(lens.WithEnv(env))
	must(err)
	cfg.Enabled = true
	h, err := lens.Setup(context.Background(), cfg, lens.WithEnv(env), lens.WithLogger(discardLogger),
		lens.WithDetectOptions(detect.WithKubernetesSecretsPath("/nonexistent")))
	must(err)
	return h
}

//go:noinline
func measureSetupTypical() *lens.Handle { return setupTypical() }

//go:noinline
func measureParse(in *countInputs) { opCountParse(in) }

//go:noinline
func measureFormat(in *countInputs) { opCountFormat(in) }

//go:noinline
func measureCheck(in *countInputs) { opCountCheck(in) }

//go:noinline
func measureDetect(in *countInputs) { opCountDetect(in) }

//go:noinline
func measureResourceAttributes(in *countInputs) { opCountResource(in) }

//go:noinline
func measureSetup(in *countInputs) { opCountSetup(in) }

// countOps are the operations of "count", by name: the operation and its
// measure function.
var countOps = []struct {
	name        string
	op, measure func(*countInputs)
}{
	{"parse", opCountParse, measureParse},
	{"format", opCountFormat, measureFormat},
	{"check", opCountCheck, measureCheck},
	{"detect", opCountDetect, measureDetect},
	{"resource", opCountResource, measureResourceAttributes},
	{"setup", opCountSetup, measureSetup},
}

func countCommand(args []string) error {
	fs := flag.NewFlagSet("count", flag.ContinueOnError)
	n := fs.Int("entries", 1000, "carrier entries")
	only := fs.String("ops", "all", "operations, comma-separated: parse, format, check, detect, resource, setup")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var names []string
	for _, o := range countOps {
		names = append(names, o.name)
	}
	selected, err := splitList(*only, names)
	if err != nil {
		return err
	}
	debug.SetGCPercent(-1)
	in := prepareCount(*n)
	// The typical Setup first, cold, as in a fresh worker; shut down
	// outside the measure (a refusing or absent collector ends it at once).
	h := measureSetupTypical()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	_ = h.Shutdown(ctx)
	cancel()
	// Then each operation once on a tiny input, so that one-time
	// initialisation is not counted, and the measures.
	warm := prepareCount(4)
	for _, o := range countOps {
		if slices.Contains(selected, o.name) {
			o.op(warm)
		}
	}
	for _, o := range countOps {
		if slices.Contains(selected, o.name) {
			o.measure(in)
		}
	}
	fmt.Println(sink)
	return nil
}

func callgrindCostsCommand(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("want one callgrind profile")
	}
	f, err := os.Open(args[0])
	if err != nil {
		return err
	}
	defer f.Close()
	costs, err := callgrind.InclusiveCosts(f)
	if err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(costs)) {
		fmt.Printf("%s %d\n", k, costs[k])
	}
	return nil
}
