package attr

import (
	"iter"
	"maps"
	"slices"
	"strings"
)

// Entry is one key and its value.
type Entry struct {
	Key   string
	Value Value
}

// indexThreshold is the size above which a Map keeps a hash index. Below it a
// linear scan over the entries is faster than hashing and allocates nothing;
// typical carriers hold 10–40 keys.
const indexThreshold = 48

// Map is an insertion-ordered map from string keys to [Value]s, the Go form of
// the Python dict the reference uses: a repeated assignment replaces the value
// but keeps the key's first position, and iteration follows that order.
//
// Cost: up to 48 keys a lookup scans the entries; above that the map keeps a
// hash index, so [Map.Get], [Map.Has], [Map.Set], [Map.SetString] and
// [Map.SetDefault] take constant time (amortised: the entries grow by
// doubling), and [Map.Update], [Map.Clone], [Map.Equal] and building a map
// take time linear in the number of entries involved. [Map.Delete] is the
// exception: it keeps the order by shifting the later entries, which is
// linear in the size of the map; deleting many keys one by one is therefore
// quadratic, and a caller that drops many keys should build a new map.
//
// The zero Map is empty and ready to use. A nil *Map reads as empty (Len, Get,
// All, … work) but cannot be written. A Map must not be copied after first use
// (copy it with [Map.Clone]); it is not safe for concurrent writes.
type Map struct {
	entries []Entry
	index   map[string]int // nil until len(entries) > indexThreshold
}

// NewMap returns a map holding the given entries in order; a repeated key
// keeps its first position and takes its last value.
func NewMap(entries ...Entry) *Map {
	m := &Map{entries: make([]Entry, 0, len(entries))}
	for _, e := range entries {
		m.Set(e.Key, e.Value)
	}
	return m
}

// FromStrings returns a map of string values from key/value pairs given as
// alternating arguments ("k1", "v1", "k2", "v2", ...). A trailing odd key gets
// the empty string.
func FromStrings(kv ...string) *Map {
	m := &Map{entries: make([]Entry, 0, (len(kv)+1)/2)}
	for i := 0; i < len(kv); i += 2 {
		v := ""
		if i+1 < len(kv) {
			v = kv[i+1]
		}
		m.Set(kv[i], String(v))
	}
	return m
}

// WithCapacity returns an empty map with room for n entries (none if n is
// negative). The room is only a hint: the map grows past it as needed.
func WithCapacity(n int) *Map { return &Map{entries: make([]Entry, 0, max(n, 0))} }

// Len returns the number of keys.
func (m *Map) Len() int {
	if m == nil {
		return 0
	}
	return len(m.entries)
}

func (m *Map) find(key string) int {
	if m == nil {
		return -1
	}
	if m.index != nil {
		if i, ok := m.index[key]; ok {
			return i
		}
		return -1
	}
	for i := range m.entries {
		if m.entries[i].Key == key {
			return i
		}
	}
	return -1
}

// Get returns the value stored under key and whether the key is present. A
// present key may hold the null value.
func (m *Map) Get(key string) (Value, bool) {
	if i := m.find(key); i >= 0 {
		return m.entries[i].Value, true
	}
	return Value{}, false
}

// Has reports whether key is present.
func (m *Map) Has(key string) bool { return m.find(key) >= 0 }

// Set assigns v to key. A new key goes last; an existing key keeps its
// position and takes the new value.
func (m *Map) Set(key string, v Value) {
	if i := m.find(key); i >= 0 {
		m.entries[i].Value = v
		return
	}
	m.add(key, v)
}

// add appends key, which must be absent.
func (m *Map) add(key string, v Value) {
	m.entries = append(m.entries, Entry{Key: key, Value: v})
	if m.index != nil {
		m.index[key] = len(m.entries) - 1
	} else if len(m.entries) > indexThreshold {
		m.reindex()
	}
}

// SetString is shorthand for m.Set(key, String(s)).
func (m *Map) SetString(key, s string) { m.Set(key, String(s)) }

// SetDefault assigns v to key only when key is absent, and reports whether it did.
func (m *Map) SetDefault(key string, v Value) bool {
	if m.find(key) >= 0 {
		return false
	}
	m.add(key, v)
	return true
}

// reindex builds the index of all entries, sized for the entries' capacity
// (which a caller of WithCapacity sized for the map it is building).
func (m *Map) reindex() {
	m.index = make(map[string]int, max(cap(m.entries), 2*len(m.entries)))
	for i, e := range m.entries {
		m.index[e.Key] = i
	}
}

// Delete removes key and reports whether it was present. The remaining keys
// keep their relative order. Delete takes time linear in the number of
// entries after key, which it shifts (and re-indexes).
func (m *Map) Delete(key string) bool {
	i := m.find(key)
	if i < 0 {
		return false
	}
	m.entries = slices.Delete(m.entries, i, i+1)
	if m.index == nil {
		return true
	}
	if len(m.entries) <= indexThreshold {
		m.index = nil
		return true
	}
	delete(m.index, key)
	for j := i; j < len(m.entries); j++ {
		m.index[m.entries[j].Key] = j
	}
	return true
}

// All iterates over the entries in order. The map must not be modified
// during the iteration.
func (m *Map) All() iter.Seq2[string, Value] {
	return func(yield func(string, Value) bool) {
		if m == nil {
			return
		}
		for _, e := range m.entries {
			if !yield(e.Key, e.Value) {
				return
			}
		}
	}
}

// Keys returns the keys in order.
func (m *Map) Keys() []string {
	if m == nil {
		return nil
	}
	keys := make([]string, len(m.entries))
	for i, e := range m.entries {
		keys[i] = e.Key
	}
	return keys
}

// Entries returns a copy of the entries in order.
func (m *Map) Entries() []Entry {
	if m == nil {
		return nil
	}
	return slices.Clone(m.entries)
}

// Clone returns an independent copy. Cloning a nil map gives an empty map.
func (m *Map) Clone() *Map {
	if m == nil {
		return &Map{}
	}
	return &Map{entries: slices.Clone(m.entries), index: maps.Clone(m.index)}
}

// Update assigns every entry of other in other's order (later wins), like
// Python's dict.update. A nil other is a no-op.
func (m *Map) Update(other *Map) {
	if other == nil {
		return
	}
	for _, e := range other.entries {
		m.Set(e.Key, e.Value)
	}
}

// Equal reports whether m and o hold the same keys in the same order with
// equal values. A nil map equals an empty one.
func (m *Map) Equal(o *Map) bool {
	if m.Len() != o.Len() {
		return false
	}
	for i := 0; i < m.Len(); i++ {
		a, b := m.entries[i], o.entries[i]
		if a.Key != b.Key || !a.Value.Equal(b.Value) {
			return false
		}
	}
	return true
}

// String renders the map for debugging as {k1=v1, k2=v2}, values in their
// carrier text form, strings quoted.
func (m *Map) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range m.Entries() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(e.Key)
		b.WriteByte('=')
		if e.Value.Kind() == KindString {
			b.WriteString(`"` + e.Value.AsString() + `"`)
		} else {
			b.WriteString(e.Value.String())
		}
	}
	b.WriteByte('}')
	return b.String()
}
