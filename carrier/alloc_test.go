package carrier_test

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/internal/scalegen"
)

// TestAllocations pins the allocations of the codec, which must not grow with
// the size of the values: Decode and Encode allocate their result once (not
// at all when there is nothing to do), Parse the map, its entries and one
// string per decoded value, Format its result and, above 32 entries, its
// list of entries. (Decode once grew a 64-byte buffer for every ASCII run:
// 62 allocations for ten 1 KiB escape-heavy values.) Not parallel: the
// garbage collector is off meanwhile, since the goroutines it starts are
// counted as allocations too.
func TestAllocations(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	for _, size := range []int{10, 1 << 10, 16 << 10, 100 << 10} {
		t.Run(fmt.Sprint("value=", size), func(t *testing.T) {
			escaped := scalegen.Encoded(size, scalegen.Escaped)
			raw := scalegen.Value(size, scalegen.Escaped)
			plain := scalegen.Value(size, scalegen.Plain)
			text := scalegen.Text(10, size, scalegen.Escaped)
			small, large := scalegen.Map(10, size, scalegen.Escaped), scalegen.Map(100, size, scalegen.Escaped)
			tests := []struct {
				name string
				want float64
				f    func()
			}{
				{"Decode(escaped)", 1, func() { carrier.Decode(escaped) }},
				{"Decode(plain)", 0, func() { carrier.Decode(plain) }},
				{"Encode(raw)", 1, func() { carrier.Encode(raw) }},
				{"Encode(plain)", 0, func() { carrier.Encode(plain) }},
				{"Parse(10 escaped)", 2 + 10, func() { carrier.Parse(text) }},
				{"Format(10 entries)", 1, func() { carrier.Format(small) }},
				{"Format(100 entries)", 2, func() { carrier.Format(large) }},
			}
			for _, tt := range tests {
				if got := testing.AllocsPerRun(5, tt.f); got != tt.want {
					t.Errorf("%s allocates %v times, want %v", tt.name, got, tt.want)
				}
			}
		})
	}
}

// TestParseReservesLittle: Parse reserves room for the entries text can
// hold, not one per comma.
func TestParseReservesLittle(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	for _, text := range []string{strings.Repeat(",", 1<<20), strings.Repeat("novalue,", 1<<17) + "a=1"} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m := carrier.Parse(text)
		runtime.ReadMemStats(&after)
		if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10 || m.Len() > 1 {
			t.Errorf("Parse of %d bytes with %d commas allocated %d bytes for %d entries", len(text), strings.Count(text, ","), got, m.Len())
		}
	}
}
