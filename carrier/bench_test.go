package carrier_test

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/internal/scalegen"
)

// benchEntries is a realistic launcher carrier: 24 entries with Slurm keys,
// nv.dl.* keys, UUIDs, and values that need escaping (',', '=', '/', ' ',
// ':', '[', ']').
var benchEntries = []attr.Entry{
	{Key: "service.name", Value: attr.String("nv.dl.launch")},
	{Key: "service.version", Value: attr.String("0.3.0")},
	{Key: "nemo.run.id", Value: attr.String("exp/2026-01,seed=7")},
	{Key: "nv.dl.job.uuid", Value: attr.String("6f1c2a9e-3b4d-5e8f-9a0b-1c2d3e4f5a6b")},
	{Key: "nv.dl.run.uuid", Value: attr.String("0d9c8b7a-6f5e-5d4c-8b3a-291807f6e5d4")},
	{Key: "nv.dl.rank", Value: attr.Int(3)},
	{Key: "nv.dl.local_rank", Value: attr.Int(3)},
	{Key: "nv.dl.world_size", Value: attr.Int(64)},
	{Key: "nv.dl.role", Value: attr.String("worker")},
	{Key: "nv.dl.launch.container.image", Value: attr.String("nvcr.io/nvidia/nemo:25.04")},
	{Key: "slurm.job.id", Value: attr.Int(4242001)},
	{Key: "slurm.job.id.raw", Value: attr.String("4242001")},
	{Key: "slurm.job.name", Value: attr.String("train llama,70b")},
	{Key: "slurm.array.job_id", Value: attr.Int(4242000)},
	{Key: "slurm.array.task_id", Value: attr.Int(1)},
	{Key: "slurm.array.count", Value: attr.Int(4)},
	{Key: "slurm.nnodes", Value: attr.Int(8)},
	{Key: "slurm.nodelist", Value: attr.String("node-[001-008]")},
	{Key: "slurm.partition", Value: attr.String("batch")},
	{Key: "slurm.cluster.name", Value: attr.String("eos")},
	{Key: "slurm.step.id", Value: attr.Int(0)},
	{Key: "host.gpu.count", Value: attr.Int(8)},
	{Key: "deployment.environment.name", Value: attr.String("prod")},
	{Key: "nv.dl.checkpoint.enabled", Value: attr.Bool(true)},
}

func benchMap() *attr.Map { return attr.NewMap(benchEntries...) }

func benchText(b *testing.B) string {
	b.Helper()
	text, dropped := carrier.Format(benchMap())
	if len(dropped) != 0 || carrier.Parse(text).Len() != len(benchEntries) {
		b.Fatalf("bad benchmark carrier %q (dropped %v)", text, dropped)
	}
	return text
}

// BenchmarkParse compares Parse with what the OpenTelemetry Go SDK does
// with the same variable: resource.New with the environment detector, which
// reads OTEL_RESOURCE_ATTRIBUTES from the process environment.
func BenchmarkParse(b *testing.B) {
	text := benchText(b)
	b.Run("lens", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			carrier.Parse(text)
		}
	})
	b.Run("otel-sdk", func(b *testing.B) {
		b.Setenv(carrier.EnvVar, text) // restored when the benchmark ends
		ctx := context.Background()
		r, err := resource.New(ctx, resource.WithFromEnv())
		if err != nil || r.Len() != len(benchEntries) {
			b.Fatalf("SDK parsed %d attributes, %v", r.Len(), err)
		}
		b.ReportAllocs()
		for b.Loop() {
			resource.New(ctx, resource.WithFromEnv())
		}
	})
}

func BenchmarkFormat(b *testing.B) {
	m := benchMap()
	b.ReportAllocs()
	for b.Loop() {
		carrier.Format(m)
	}
}

// BenchmarkExtend is what a launcher does per child: parse the inherited
// carrier, compose, format.
func BenchmarkExtend(b *testing.B) {
	text := benchText(b)
	defaults := attr.NewMap(
		attr.Entry{Key: "nv.dl.role", Value: attr.String("worker")},
		attr.Entry{Key: "nv.dl.restart.count", Value: attr.Int(0)},
	)
	overrides := attr.NewMap(
		attr.Entry{Key: "nv.dl.rank", Value: attr.Int(17)},
		attr.Entry{Key: "nv.dl.local_rank", Value: attr.Int(1)},
		attr.Entry{Key: "service.instance.id", Value: attr.String("6f1c2a9e-3b4d-5e8f-9a0b-1c2d3e4f5a6b-17")},
	)
	b.ReportAllocs()
	for b.Loop() {
		carrier.Extend(text, defaults, overrides)
	}
}

// The scale benchmarks measure cost against the number of entries (1 to
// 10,000 entries of 10-byte values) and against the value size (10 entries
// of 10 B to 100 KiB), for each value shape of package internal/scalegen, side by
// side with the OpenTelemetry Go SDK's parser (Parse only; the SDK has no
// formatter) and with a "floor": a single-pass implementation in this file
// that does the same kind of work without the reference's rules (no
// trimming, no duplicate handling, no UTF-8 replacement, no validation).
//
// Sub-benchmark names are slash-separated key=value fields and end with the
// implementation, for report scripts:
//
//	BenchmarkScaleParse/entries=1000/value=10B/shape=escaped/lens
//	BenchmarkScaleParse/entries=1000/value=10B/shape=escaped/otel-sdk
//	BenchmarkScaleParse/entries=1000/value=10B/shape=escaped/floor
//
// Value sizes are those of the decoded value; an escaped value's carrier
// text is about a third longer. Run them with, e.g.,
//
//	go test -run '^$' -bench '^BenchmarkScale' -benchtime 200ms ./carrier/

func BenchmarkScaleParse(b *testing.B) {
	// The SDK reports each invalid escape to otel.Handle, whose default
	// handler logs it.
	prev := otel.GetErrorHandler()
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
	b.Cleanup(func() { otel.SetErrorHandler(prev) })
	ctx := context.Background()
	for _, c := range scalegen.Cases(scalegen.Shapes...) {
		text := scalegen.Text(c.Entries, c.Size, c.Shape)
		b.Run(c.String(), func(b *testing.B) {
			b.Setenv(carrier.EnvVar, text)
			if n := carrier.Get(nil).Len(); n != c.Entries {
				b.Fatalf("Parse returned %d entries, want %d", n, c.Entries)
			}
			if r, err := resource.New(ctx, resource.WithFromEnv()); r.Len() != c.Entries {
				b.Fatalf("the SDK parsed %d attributes, want %d (%v)", r.Len(), c.Entries, err)
			}
			if n := len(parseFloor(text)); n != c.Entries {
				b.Fatalf("the floor parsed %d entries, want %d", n, c.Entries)
			}
			benchBytes(b, "lens", len(text), func() { carrier.Get(nil) })
			benchBytes(b, "otel-sdk", len(text), func() { resource.New(ctx, resource.WithFromEnv()) })
			benchBytes(b, "floor", len(text), func() { parseFloor(text) })
		})
	}
}

func BenchmarkScaleFormat(b *testing.B) {
	for _, c := range scalegen.Cases(scalegen.Plain, scalegen.Escaped) {
		m := scalegen.Map(c.Entries, c.Size, c.Shape)
		b.Run(c.String(), func(b *testing.B) {
			text, dropped := carrier.Format(m)
			if floor := formatFloor(m); text != floor || dropped != nil {
				b.Fatalf("Format and the floor disagree (dropped %v)", dropped)
			}
			benchBytes(b, "lens", len(text), func() { carrier.Format(m) })
			benchBytes(b, "floor", len(text), func() { formatFloor(m) })
		})
	}
}

func BenchmarkScaleExtend(b *testing.B) {
	overrides := attr.NewMap(
		attr.Entry{Key: "nv.dl.rank", Value: attr.Int(17)},
		attr.Entry{Key: "nv.dl.local_rank", Value: attr.Int(1)},
		attr.Entry{Key: "service.instance.id", Value: attr.String("6f1c2a9e-3b4d-5e8f-9a0b-1c2d3e4f5a6b-17")},
	)
	for _, c := range scalegen.Cases(scalegen.Plain, scalegen.Escaped) {
		text := scalegen.Text(c.Entries, c.Size, c.Shape)
		b.Run(c.String(), func(b *testing.B) {
			got, _ := carrier.Extend(text, nil, overrides)
			if floor := extendFloor(text, overrides); got != floor {
				b.Fatalf("Extend and the floor disagree")
			}
			benchBytes(b, "lens", len(text), func() { carrier.Extend(text, nil, overrides) })
			benchBytes(b, "floor", len(text), func() { extendFloor(text, overrides) })
		})
	}
}

func BenchmarkScaleDuplicateKeys(b *testing.B) {
	for _, c := range scalegen.Cases(scalegen.Escaped) {
		text := scalegen.DupText(c.Entries, c.Size, c.Shape)
		b.Run(c.String(), func(b *testing.B) {
			if got, floor := carrier.DuplicateKeys(text), duplicatesFloor(text); len(got) != len(floor) {
				b.Fatalf("DuplicateKeys found %d, the floor %d", len(got), len(floor))
			}
			benchBytes(b, "lens", len(text), func() { carrier.DuplicateKeys(text) })
			benchBytes(b, "floor", len(text), func() { duplicatesFloor(text) })
		})
	}
}

// BenchmarkScaleCheck checks a parsed carrier as `lens carrier check` does:
// every key required, two forbidden, duplicates searched in the text.
func BenchmarkScaleCheck(b *testing.B) {
	for _, c := range scalegen.Cases(scalegen.Escaped) {
		text := scalegen.DupText(c.Entries, c.Size, c.Shape)
		attrs := carrier.Parse(text)
		required := attrs.Keys()
		forbidden := []string{"slurm.nodelist", scalegen.Key(0)}
		b.Run(c.String(), func(b *testing.B) {
			benchBytes(b, "lens", len(text), func() { carrier.Check(attrs, required, forbidden, text) })
			index := make(map[string]attr.Value, attrs.Len())
			for k, v := range attrs.All() {
				index[k] = v
			}
			benchBytes(b, "floor", len(text), func() { checkFloor(index, required, forbidden, text) })
		})
	}
}

// benchBytes runs f as the sub-benchmark name, reporting allocations and
// the throughput of n bytes per call.
func benchBytes(b *testing.B, name string, n int, f func()) {
	b.Run(name, func(b *testing.B) {
		b.SetBytes(int64(n))
		b.ReportAllocs()
		for b.Loop() {
			f()
		}
	})
}

// The floors.

var floorSafe = func() (t [256]bool) {
	for c := range 256 {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-' || c == '~'
	}
	return t
}()

func floorEncode(b *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if floorSafe[c] {
			continue
		}
		b.WriteString(s[start:i])
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
		start = i + 1
	}
	b.WriteString(s[start:])
}

func floorUnhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10
	}
	return 0xff
}

// floorDecode turns every %XY with two hex digits into its byte, in one pass.
func floorDecode(s string) string {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i >= 0 {
		b.WriteString(s[:i])
		s = s[i:]
		if len(s) >= 3 {
			if hi, lo := floorUnhex(s[1]), floorUnhex(s[2]); hi|lo < 16 {
				b.WriteByte(hi<<4 | lo)
				s = s[3:]
				i = strings.IndexByte(s, '%')
				continue
			}
		}
		b.WriteByte('%')
		s = s[1:]
		i = strings.IndexByte(s, '%')
	}
	b.WriteString(s)
	return b.String()
}

type floorPair struct{ key, value string }

// parseFloor splits on ',' and '=' and decodes the values.
func parseFloor(text string) []floorPair {
	var pairs []floorPair
	for text != "" {
		var seg string
		seg, text, _ = strings.Cut(text, ",")
		if k, v, ok := strings.Cut(seg, "="); ok {
			pairs = append(pairs, floorPair{k, floorDecode(v)})
		}
	}
	return pairs
}

// formatFloor writes key=encoded value for every non-null entry.
func formatFloor(m *attr.Map) string {
	var b strings.Builder
	for k, v := range m.All() {
		text, ok := v.Text()
		if !ok {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		floorEncode(&b, text)
	}
	return b.String()
}

// extendFloor re-encodes every segment of text and appends the overrides.
func extendFloor(text string, overrides *attr.Map) string {
	var b strings.Builder
	for text != "" {
		var seg string
		seg, text, _ = strings.Cut(text, ",")
		if k, v, ok := strings.Cut(seg, "="); ok {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(k)
			b.WriteByte('=')
			floorEncode(&b, floorDecode(v))
		}
	}
	for k, v := range overrides.All() {
		text, _ := v.Text()
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		floorEncode(&b, text)
	}
	return b.String()
}

// duplicatesFloor collects the repeated keys with a hash set.
func duplicatesFloor(text string) []string {
	seen := make(map[string]bool)
	var dups []string
	for text != "" {
		var seg string
		seg, text, _ = strings.Cut(text, ",")
		if k, _, ok := strings.Cut(seg, "="); ok {
			if reported, ok := seen[k]; !ok {
				seen[k] = false
			} else if !reported {
				seen[k] = true
				dups = append(dups, k)
			}
		}
	}
	return dups
}

func checkFloor(attrs map[string]attr.Value, required, forbidden []string, text string) (missing, empty, bad, dups []string) {
	for _, k := range required {
		if v, ok := attrs[k]; !ok {
			missing = append(missing, k)
		} else if v.IsNull() || v.AsString() == "" && v.Kind() == attr.KindString {
			empty = append(empty, k)
		}
	}
	for _, k := range forbidden {
		if _, ok := attrs[k]; ok {
			bad = append(bad, k)
		}
	}
	return missing, empty, bad, duplicatesFloor(text)
}
