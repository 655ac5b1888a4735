package attr_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/nemolens/lens-go/attr"
)

func TestNilAndZeroMapReadAsEmpty(t *testing.T) {
	t.Parallel()
	for name, m := range map[string]*attr.Map{"nil": nil, "zero": {}} {
		t.Run(name, func(t *testing.T) {
			if m.Len() != 0 || m.Has("a") || len(m.Keys()) != 0 || len(m.Entries()) != 0 || len(m.KeyValues()) != 0 {
				t.Errorf("%s map is not empty", name)
			}
			if v, ok := m.Get("a"); ok || !v.IsNull() {
				t.Errorf("Get on %s map = %v, %v", name, v, ok)
			}
			for range m.All() {
				t.Errorf("All yielded on %s map", name)
			}
			if !m.Equal(&attr.Map{}) || !(&attr.Map{}).Equal(m) || !m.Equal(nil) {
				t.Errorf("%s map does not equal an empty map", name)
			}
			if m.String() != "{}" {
				t.Errorf("String() = %q", m.String())
			}
			c := m.Clone()
			if c == nil || c.Len() != 0 {
				t.Fatalf("Clone() = %v", c)
			}
			c.SetString("a", "1") // the clone is writable
			if m.Len() != 0 {
				t.Errorf("writing the clone changed the original")
			}
			(&attr.Map{}).Update(m) // a nil/empty other is a no-op
		})
	}
	var z attr.Map // the zero Map is ready to use
	z.SetString("k", "v")
	if z.Len() != 1 {
		t.Errorf("zero Map Len after Set = %d", z.Len())
	}
}

func TestMapOrder(t *testing.T) {
	t.Parallel()
	m := attr.NewMap(
		attr.Entry{Key: "a", Value: attr.Int(1)},
		attr.Entry{Key: "b", Value: attr.Int(2)},
		attr.Entry{Key: "a", Value: attr.Int(3)}, // first position, last value
	)
	if got := m.Keys(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("keys = %v", got)
	}
	if v, _ := m.Get("a"); !v.Equal(attr.Int(3)) {
		t.Errorf("a = %v, want 3", v)
	}

	m.Set("c", attr.Null()) // a present null
	if v, ok := m.Get("c"); !ok || !v.IsNull() || !m.Has("c") {
		t.Errorf("c = %v, %v; want present null", v, ok)
	}
	m.Set("b", attr.String("")) // keeps position
	if got := m.Keys(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("keys after re-set = %v", got)
	}
	if m.SetDefault("b", attr.Int(9)) {
		t.Errorf("SetDefault replaced an existing key")
	}
	if v, _ := m.Get("b"); !v.Equal(attr.String("")) {
		t.Errorf("b = %v after SetDefault", v)
	}
	if !m.SetDefault("d", attr.Int(4)) {
		t.Errorf("SetDefault did not add d")
	}

	if !m.Delete("a") || m.Delete("a") || m.Has("a") {
		t.Errorf("Delete(a) misbehaved")
	}
	if got := m.Keys(); !slices.Equal(got, []string{"b", "c", "d"}) {
		t.Errorf("keys after Delete = %v", got)
	}
	m.SetString("a", "again") // a deleted key comes back last
	if got := m.Keys(); !slices.Equal(got, []string{"b", "c", "d", "a"}) {
		t.Errorf("keys after re-adding a = %v", got)
	}
	if got, want := m.String(), `{b="", c=null, d=4, a="again"}`; got != want {
		t.Errorf("String() = %s, want %s", got, want)
	}

	var seen []string
	for k := range m.All() {
		seen = append(seen, k)
		if len(seen) == 2 {
			break // early stop is honoured
		}
	}
	if !slices.Equal(seen, []string{"b", "c"}) {
		t.Errorf("All with break = %v", seen)
	}
}

func TestFromStrings(t *testing.T) {
	t.Parallel()
	m := attr.FromStrings("a", "1", "b", "2", "a", "3", "odd")
	want := attr.NewMap(
		attr.Entry{Key: "a", Value: attr.String("3")},
		attr.Entry{Key: "b", Value: attr.String("2")},
		attr.Entry{Key: "odd", Value: attr.String("")},
	)
	if !m.Equal(want) {
		t.Errorf("FromStrings = %v, want %v", m, want)
	}
	if attr.FromStrings().Len() != 0 {
		t.Errorf("FromStrings() is not empty")
	}
}

func TestMapEqual(t *testing.T) {
	t.Parallel()
	ab := attr.FromStrings("a", "1", "b", "2")
	tests := []struct {
		name string
		o    *attr.Map
		want bool
	}{
		{"same", attr.FromStrings("a", "1", "b", "2"), true},
		{"order", attr.FromStrings("b", "2", "a", "1"), false},
		{"value", attr.FromStrings("a", "1", "b", "3"), false},
		{"typed", attr.NewMap(attr.Entry{Key: "a", Value: attr.Int(1)}, attr.Entry{Key: "b", Value: attr.String("2")}), false},
		{"shorter", attr.FromStrings("a", "1"), false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		if got := ab.Equal(tt.o); got != tt.want {
			t.Errorf("%s: Equal = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestMapUpdate(t *testing.T) {
	t.Parallel()
	m := attr.FromStrings("a", "1", "b", "2")
	m.Update(attr.NewMap(
		attr.Entry{Key: "c", Value: attr.Int(3)},
		attr.Entry{Key: "a", Value: attr.Null()},
	))
	want := attr.NewMap(
		attr.Entry{Key: "a", Value: attr.Null()},
		attr.Entry{Key: "b", Value: attr.String("2")},
		attr.Entry{Key: "c", Value: attr.Int(3)},
	)
	if !m.Equal(want) {
		t.Errorf("Update = %v, want %v", m, want)
	}
	m.Update(nil)
	if !m.Equal(want) {
		t.Errorf("Update(nil) changed the map")
	}
}

func TestMapCloneIndependent(t *testing.T) {
	t.Parallel()
	for _, n := range []int{3, 100} { // below and above the index threshold
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			m := &attr.Map{}
			for i := range n {
				m.Set(fmt.Sprint("k", i), attr.Int(i))
			}
			c := m.Clone()
			if !c.Equal(m) {
				t.Fatalf("clone differs")
			}
			c.SetString("k0", "changed")
			c.Delete("k1")
			c.SetString("new", "x")
			m.SetString("k2", "orig-changed")
			if v, _ := m.Get("k0"); !v.Equal(attr.Int(0)) {
				t.Errorf("original k0 = %v", v)
			}
			if !m.Has("k1") || m.Has("new") || m.Len() != n {
				t.Errorf("original changed through the clone")
			}
			if v, _ := c.Get("k2"); !v.Equal(attr.Int(2)) {
				t.Errorf("clone k2 = %v, changed through the original", v)
			}
			if v, ok := c.Get("new"); !ok || !v.Equal(attr.String("x")) {
				t.Errorf("clone new = %v, %v", v, ok)
			}
			e := m.Entries()
			e[0].Value = attr.String("mutated")
			if v, _ := m.Get("k0"); !v.Equal(attr.Int(0)) {
				t.Errorf("Entries() aliases the map")
			}
		})
	}
}

// model is a naive insertion-ordered map to check Map against.
type model struct {
	keys []string
	vals map[string]attr.Value
}

func (m *model) set(k string, v attr.Value) {
	if _, ok := m.vals[k]; !ok {
		m.keys = append(m.keys, k)
	}
	m.vals[k] = v
}

func (m *model) del(k string) bool {
	if _, ok := m.vals[k]; !ok {
		return false
	}
	delete(m.vals, k)
	m.keys = slices.DeleteFunc(m.keys, func(x string) bool { return x == k })
	return true
}

func check(t *testing.T, step string, m *attr.Map, want *model, universe int) {
	t.Helper()
	if got := m.Keys(); !slices.Equal(got, want.keys) {
		t.Fatalf("%s: keys = %v, want %v", step, got, want.keys)
	}
	for i := range universe {
		k := fmt.Sprint("key-", i)
		got, ok := m.Get(k)
		w, wok := want.vals[k]
		if ok != wok || !got.Equal(w) || m.Has(k) != wok {
			t.Fatalf("%s: Get(%s) = %v, %v; want %v, %v", step, k, got, ok, w, wok)
		}
	}
}

// TestMapIndexed drives a map across the index threshold (48) in both
// directions and checks every lookup against a naive model.
func TestMapIndexed(t *testing.T) {
	t.Parallel()
	const universe = 120
	m := &attr.Map{}
	want := &model{vals: map[string]attr.Value{}}
	for i := range 100 { // grow past the threshold
		k := fmt.Sprint("key-", i)
		m.Set(k, attr.Int(i))
		want.set(k, attr.Int(i))
	}
	check(t, "grown", m, want, universe)
	for i := 0; i < 100; i += 7 { // repeated assignments keep positions
		k := fmt.Sprint("key-", i)
		m.Set(k, attr.String("x"))
		want.set(k, attr.String("x"))
	}
	check(t, "reassigned", m, want, universe)
	for i := 0; i < 100; i += 3 { // delete some; still above the threshold
		k := fmt.Sprint("key-", i)
		if m.Delete(k) != want.del(k) {
			t.Fatalf("Delete(%s) result differs", k)
		}
		check(t, "delete "+k, m, want, universe)
	}
	for m.Len() > 10 { // shrink below the threshold, from the middle
		k := want.keys[len(want.keys)/2]
		if !m.Delete(k) || !want.del(k) {
			t.Fatalf("Delete(%s) = false", k)
		}
		check(t, "shrink "+k, m, want, universe)
	}
	c := m.Clone()
	for i := range universe { // and grow again, in a different order
		k := fmt.Sprint("key-", universe-1-i)
		m.Set(k, attr.Int(-i))
		want.set(k, attr.Int(-i))
	}
	check(t, "regrown", m, want, universe)
	if c.Len() != 10 {
		t.Errorf("clone taken below the threshold changed: Len %d", c.Len())
	}
}

// TestMapRandomOps compares random operation sequences with the model.
func TestMapRandomOps(t *testing.T) {
	t.Parallel()
	const universe = 80
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 1))
		m := &attr.Map{}
		want := &model{vals: map[string]attr.Value{}}
		for step := range 600 {
			k := fmt.Sprint("key-", r.IntN(universe))
			switch op := r.IntN(10); {
			case op < 6:
				v := attr.Int(step)
				m.Set(k, v)
				want.set(k, v)
			case op < 7:
				_, had := want.vals[k]
				if m.SetDefault(k, attr.Null()) == had {
					t.Fatalf("seed %d step %d: SetDefault(%s) result wrong", seed, step, k)
				}
				if !had {
					want.set(k, attr.Null())
				}
			default:
				if m.Delete(k) != want.del(k) {
					t.Fatalf("seed %d step %d: Delete(%s) result differs", seed, step, k)
				}
			}
			if step%50 == 0 {
				m = m.Clone() // clones must carry a working index
			}
			if step%10 == 0 {
				check(t, fmt.Sprint("seed ", seed, " step ", step), m, want, universe)
			}
		}
		check(t, fmt.Sprint("seed ", seed), m, want, universe)
	}
}

func TestWithCapacityNegative(t *testing.T) {
	t.Parallel()
	for _, n := range []int{-1, -1 << 40, 0, 100} {
		m := attr.WithCapacity(n) // must not panic
		m.SetString("k", "v")
		if m.Len() != 1 {
			t.Errorf("WithCapacity(%d): Len %d after one Set", n, m.Len())
		}
	}
}
