// Command lineardriver runs every carrier operation once on generated inputs
// of a given size, for carrier/linear_test.go, which runs it under Valgrind's
// callgrind tool and compares the instructions each operation executes at
// two input sizes.
//
// Usage:
//
//	lineardriver -entries N -size BYTES
//
// builds carriers and maps of N entries whose values have BYTES bytes
// (package internal/scalegen), then calls each measure* function once. Each one wraps
// a single operation and is never inlined, so callgrind's inclusive cost of
// main.measureX is the cost of that operation alone: input generation, the
// runtime's start-up and the other operations are not part of it. The
// garbage collector is off (the inputs are small), so that its background
// work, which depends on timing, adds nothing. Every operation is first run
// once on a tiny input, outside any measure* function, so that one-time
// initialisation (lazily built tables, the logger) is not counted either.
//
// The driver prints a checksum of the results, which keeps the compiler from
// discarding the work.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/internal/scalegen"
)

type inputs struct {
	n                    int
	texts                map[scalegen.Shape]string
	dupText              string
	plainMap, escapedMap *attr.Map
	trimmedMap           *attr.Map
	defaults, overrides  *attr.Map
	entries              []attr.Entry
	required, forbidden  []string
	value                string
}

func prepare(n, size int) *inputs {
	in := &inputs{n: n, texts: map[scalegen.Shape]string{}}
	for _, s := range scalegen.Shapes {
		in.texts[s] = scalegen.Text(n, size, s)
	}
	in.dupText = scalegen.DupText(n, size, scalegen.Escaped)
	in.plainMap = scalegen.Map(n, size, scalegen.Plain)
	in.escapedMap = scalegen.Map(n, size, scalegen.Escaped)
	in.trimmedMap = scalegen.TrimmedMap(n, size, scalegen.Escaped)
	// Defaults and overrides that overlap the carrier's keys and add new
	// ones: keys n/2 … 3n/2-1 and n … 2n-1.
	in.defaults = attr.WithCapacity(n)
	for _, k := range scalegen.Keys(n/2, n) {
		in.defaults.SetString(k, "default")
	}
	in.overrides = attr.WithCapacity(n)
	for i, k := range scalegen.Keys(n, n) {
		if i%5 == 0 {
			in.overrides.Set(k, attr.Null())
		} else {
			in.overrides.Set(k, attr.Int(i))
		}
	}
	in.entries = in.escapedMap.Entries()
	in.entries = append(in.entries, in.entries...) // every key twice
	in.required = scalegen.Keys(n/2, n)
	in.forbidden = scalegen.Keys(0, n)
	in.value = scalegen.Encoded(size*n, scalegen.Escaped)
	return in
}

var sink int

func use(s string)       { sink += len(s) }
func useMap(m *attr.Map) { sink += m.Len() }

func opParsePlain(in *inputs) { useMap(carrier.Parse(in.texts[scalegen.Plain])) }

func opParseEscaped(in *inputs) { useMap(carrier.Parse(in.texts[scalegen.Escaped])) }

func opParseBadEscape(in *inputs) { useMap(carrier.Parse(in.texts[scalegen.BadEscape])) }

func opParseBadTail(in *inputs) { useMap(carrier.Parse(in.texts[scalegen.BadTail])) }

func opParseRawBytes(in *inputs) { useMap(carrier.Parse(in.texts[scalegen.RawBytes])) }

func opParseDuplicates(in *inputs) { useMap(carrier.Parse(in.dupText)) }

func opDecode(in *inputs) { use(carrier.Decode(in.value)) }

func opEncode(in *inputs) { use(carrier.Encode(in.value)) }

func opFormatPlain(in *inputs) {
	text, dropped := carrier.Format(in.plainMap)
	use(text)
	sink += len(dropped)
}

func opFormatEscaped(in *inputs) {
	text, dropped := carrier.Format(in.escapedMap)
	use(text)
	sink += len(dropped)
}

func opFormatTrimmed(in *inputs) {
	text, dropped := carrier.Format(in.trimmedMap)
	use(text)
	sink += len(dropped)
}

func opCompose(in *inputs) {
	useMap(carrier.Compose(in.escapedMap, in.defaults, in.overrides))
}

func opExtend(in *inputs) {
	text, dropped := carrier.Extend(in.texts[scalegen.Escaped], in.defaults, in.overrides)
	use(text)
	sink += len(dropped)
}

func opDuplicateKeys(in *inputs) { sink += len(carrier.DuplicateKeys(in.dupText)) }

func opMalformed(in *inputs) { sink += len(carrier.Malformed(in.dupText)) }

func opCheck(in *inputs) {
	r := carrier.Check(in.escapedMap, in.required, in.forbidden, in.dupText)
	sink += len(r.Missing) + len(r.Empty) + len(r.Forbidden) + len(r.Duplicates)
}

// opMapOps runs the attr.Map operations the carrier package relies on:
// building (Set), Get, SetDefault, Update and Clone.
func opMapOps(in *inputs) {
	m := attr.NewMap(in.entries...)
	for _, e := range in.entries {
		if v, ok := m.Get(e.Key); ok {
			sink += int(v.Kind())
		}
		if m.SetDefault(e.Key, attr.Null()) {
			sink++
		}
	}
	c := m.Clone()
	c.Update(in.defaults)
	c.Update(m)
	useMap(c)
}

// opQuadraticCanary is deliberately quadratic in the input (every
// entry compared with every earlier one, as Format and DuplicateKeys once
// did), so that the test can show that its bound catches such a loop.
func opQuadraticCanary(in *inputs) {
	units := len(in.value) / 128
	for i := range units {
		for j := range i {
			if i*j%4093 == 1 {
				sink++
			}
		}
	}
}

// The measure functions: one distinct, never inlined symbol per operation,
// whose inclusive cost callgrind reports.

//go:noinline
func measureParsePlain(in *inputs) { opParsePlain(in) }

//go:noinline
func measureParseEscaped(in *inputs) { opParseEscaped(in) }

//go:noinline
func measureParseBadEscape(in *inputs) { opParseBadEscape(in) }

//go:noinline
func measureParseBadTail(in *inputs) { opParseBadTail(in) }

//go:noinline
func measureParseRawBytes(in *inputs) { opParseRawBytes(in) }

//go:noinline
func measureParseDuplicates(in *inputs) { opParseDuplicates(in) }

//go:noinline
func measureDecode(in *inputs) { opDecode(in) }

//go:noinline
func measureEncode(in *inputs) { opEncode(in) }

//go:noinline
func measureFormatPlain(in *inputs) { opFormatPlain(in) }

//go:noinline
func measureFormatEscaped(in *inputs) { opFormatEscaped(in) }

//go:noinline
func measureFormatTrimmed(in *inputs) { opFormatTrimmed(in) }

//go:noinline
func measureCompose(in *inputs) { opCompose(in) }

//go:noinline
func measureExtend(in *inputs) { opExtend(in) }

//go:noinline
func measureDuplicateKeys(in *inputs) { opDuplicateKeys(in) }

//go:noinline
func measureMalformed(in *inputs) { opMalformed(in) }

//go:noinline
func measureCheck(in *inputs) { opCheck(in) }

//go:noinline
func measureMapOps(in *inputs) { opMapOps(in) }

//go:noinline
func measureQuadraticCanary(in *inputs) { opQuadraticCanary(in) }

var ops = []func(*inputs){
	opParsePlain, opParseEscaped, opParseBadEscape, opParseBadTail,
	opParseRawBytes, opParseDuplicates, opDecode, opEncode,
	opFormatPlain, opFormatEscaped, opFormatTrimmed, opCompose,
	opExtend, opDuplicateKeys, opMalformed, opCheck, opMapOps,
	opQuadraticCanary,
}

var measures = []func(*inputs){
	measureParsePlain, measureParseEscaped, measureParseBadEscape, measureParseBadTail,
	measureParseRawBytes, measureParseDuplicates, measureDecode, measureEncode,
	measureFormatPlain, measureFormatEscaped, measureFormatTrimmed, measureCompose,
	measureExtend, measureDuplicateKeys, measureMalformed, measureCheck, measureMapOps,
	measureQuadraticCanary,
}

func main() {
	n := flag.Int("entries", 1000, "number of entries")
	size := flag.Int("size", 10, "value size in bytes")
	flag.Parse()
	if *n < 1 || *size < 1 {
		fmt.Fprintln(os.Stderr, "lineardriver: -entries and -size must be positive")
		os.Exit(2)
	}
	debug.SetGCPercent(-1)
	warm, in := prepare(4, 4), prepare(*n, *size)
	for _, f := range ops {
		f(warm)
	}
	for _, f := range measures {
		f(in)
	}
	fmt.Println(sink)
}
