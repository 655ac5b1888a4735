package carrier

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/internal/logx"
	"github.com/nemolens/lens-go/internal/pytext"
)

// EnvVar is the name of the carrier variable.
const EnvVar = "OTEL_RESOURCE_ATTRIBUTES"

// Reasons an entry is dropped by [Format]. They are wrapped in [Dropped.Err];
// test with errors.Is.
var (
	// ErrKeyNotCarried: the key is empty after trimming, or contains ',' or
	// '=', which no parser can read back (keys are never percent-encoded
	// because SDKs decode only values), or contains NUL ([ErrKeyHasNUL],
	// which wraps it).
	ErrKeyNotCarried = errors.New("key cannot be carried")
	// ErrKeyHasNUL: the trimmed key contains NUL (U+0000), which no
	// environment variable can hold (a divergence from the Python
	// reference, see [Format]). It wraps ErrKeyNotCarried.
	ErrKeyHasNUL = fmt.Errorf("%w: it contains NUL, which no environment variable can hold", ErrKeyNotCarried)
	// ErrInvalidUTF8: a string value is not valid UTF-8 (the Python
	// reference's lone surrogates reach the same outcome).
	ErrInvalidUTF8 = errors.New("value is not valid UTF-8")
)

// Dropped reports one entry that [Format] left out of the carrier, with the
// reason. Null values are omitted silently and are never reported.
type Dropped struct {
	Key string // the original, untrimmed key
	Err error  // wraps ErrKeyNotCarried or ErrInvalidUTF8
}

func (d Dropped) String() string { return fmt.Sprintf("%q: %v", d.Key, d.Err) }

// Parse decodes carrier text into an ordered map of string values, exactly as
// the Python reference's parse_otel_resource_attributes does:
//
//   - "" gives an empty map;
//   - the text is split on every ',' (there is no escaping of ',' in the
//     syntax);
//   - a segment without '=' is skipped, and so is a blank one;
//   - key = the part before the first '=', trimmed with Python's str.strip
//     set (docs/compatibility.md#whitespace), never percent-decoded; a segment whose key is
//     empty is skipped;
//   - value = everything after the first '=' (it may contain more '='),
//     trimmed, then percent-decoded ([Decode]), so an encoded space at
//     either end survives;
//   - a repeated key keeps the position of its first occurrence and takes
//     the value of its last one.
//
// Malformed segments are skipped silently; Parse never fails. The returned
// keys and undecoded values share memory with text. Parse takes time linear
// in len(text), whatever the number of segments or the size of the values.
// It allocates the map, with room for as many entries as text has segments
// (or '=' signs, if there are fewer), the map's hash index when there are
// more than 48 keys, and one string per value that contains '%'.
func Parse(text string) *attr.Map {
	if text == "" {
		return &attr.Map{}
	}
	m := attr.WithCapacity(parseCapacity(text))
	parseInto(m, text)
	return m
}

// parseCapacity bounds the number of entries text can give: each needs a
// segment of its own and an '=' in it. The '=' signs are counted only when
// there are more than fewSegments segments, so that a long text of few
// segments (large values) is not scanned once more, while a text of commas
// alone does not reserve room for entries it cannot hold (16 MiB of commas
// once reserved 768 MiB).
func parseCapacity(text string) int {
	n := strings.Count(text, ",") + 1
	if n <= fewSegments {
		return n
	}
	return min(n, strings.Count(text, "="))
}

const fewSegments = 64

// parseInto assigns the entries of carrier text into m, in order, with
// Parse's rules.
func parseInto(m *attr.Map, text string) {
	for {
		seg, rest := text, ""
		if i := strings.IndexByte(text, ','); i >= 0 {
			seg, rest = text[:i], text[i+1:]
		}
		if eq := strings.IndexByte(seg, '='); eq >= 0 {
			if k := pytext.TrimSpace(seg[:eq]); k != "" {
				m.Set(k, attr.String(Decode(pytext.TrimSpace(seg[eq+1:]))))
			}
		}
		if len(seg) == len(text) {
			return
		}
		text = rest
	}
}

// Format encodes an ordered map as carrier text, byte-for-byte as the Python
// reference's format_otel_resource_attributes does, entry by entry in map
// order:
//
//   - a null value is skipped silently (before any other check);
//   - the key is trimmed (docs/compatibility.md#whitespace); an empty key or one containing ','
//     or '=' is dropped ([ErrKeyNotCarried]); other characters (spaces
//     inside, '%', non-ASCII) are kept verbatim, never encoded;
//   - the value is stringified ([attr.Value.Text]: True/False, base-10
//     integers, Python float repr); a string that is not valid UTF-8 is
//     dropped ([ErrInvalidUTF8]); every byte outside A-Z a-z 0-9 _ . - ~ is
//     percent-encoded with uppercase hex ([Encode]);
//   - two keys that trim to the same name: the last value wins at the
//     position of the first.
//
// Entries are joined with ',' and no trailing comma; an empty map gives "".
// Format never fails as a whole: each dropped entry is returned in dropped
// (in input order) and logged at WARN.
//
// Divergence from the Python reference: a key that contains NUL (U+0000)
// after trimming is dropped too, reported with [ErrKeyHasNUL] (which wraps
// [ErrKeyNotCarried]). No environment variable can hold NUL, and exec
// rejects an environment that contains one, so such a carrier could never
// reach a child. The reference keeps the key verbatim (keys are never
// encoded), and the carrier it returns then fails when it is assigned to
// os.environ (ValueError: embedded null byte).
//
// Format takes time linear in the size of the map and of its values: it
// allocates the result once, sized exactly, plus a list of the entries when
// the map has more than 32 and an index of the names when a trimmed key could
// collide with another (more than 32 entries, of which at least one was
// changed by trimming).
func Format(m *attr.Map) (text string, dropped []Dropped) {
	return format(m, nil)
}

// part is one entry Format writes: its trimmed name and its value, a string
// (valid UTF-8) or an int64. enc is the length of the encoded value.
type part struct {
	name string
	v    attr.Value
	enc  int
}

// partsOnStack is the number of parts Format keeps on the stack, and the
// largest number of names it merges by comparing each with every earlier
// one instead of indexing them.
const partsOnStack = 32

func format(m *attr.Map, logger *slog.Logger) (string, []Dropped) {
	var (
		dropped []Dropped
		stack   [partsOnStack]part
		trimmed bool
	)
	parts := stack[:0]
	if m.Len() > len(stack) {
		parts = make([]part, 0, m.Len())
	}
	for key, v := range m.All() {
		if v.IsNull() {
			continue
		}
		name := pytext.TrimSpace(key)
		if err := checkName(name); err != nil {
			dropped = append(dropped, drop(logger, key, err))
			continue
		}
		switch v.Kind() {
		case attr.KindString:
			if !validUTF8(v.AsString()) {
				dropped = append(dropped, drop(logger, key, ErrInvalidUTF8))
				continue
			}
		case attr.KindInt64:
			// Written with strconv.AppendInt, without a string.
		default:
			text, _ := v.Text()
			v = attr.String(text)
		}
		trimmed = trimmed || len(name) != len(key)
		parts = append(parts, part{name: name, v: v})
	}
	// The keys of a Map are distinct, so two names can only be equal if
	// trimming changed at least one of them.
	if trimmed {
		parts = mergeNames(parts)
	}
	if len(parts) == 0 {
		return "", dropped
	}
	size := len(parts) - 1 // the commas
	var digits [20]byte
	for i := range parts {
		p := &parts[i]
		if p.v.Kind() == attr.KindInt64 {
			p.enc = len(strconv.AppendInt(digits[:0], p.v.AsInt64(), 10)) // digits and '-': nothing to encode
		} else {
			p.enc = encodedLen(p.v.AsString())
		}
		size += len(p.name) + 1 + p.enc
	}
	var b strings.Builder
	b.Grow(size)
	for i := range parts {
		p := &parts[i]
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(p.name)
		b.WriteByte('=')
		switch s := p.v.AsString(); {
		case p.v.Kind() == attr.KindInt64:
			b.Write(strconv.AppendInt(digits[:0], p.v.AsInt64(), 10))
		case p.enc == len(s):
			b.WriteString(s)
		default:
			appendEncoded(&b, s)
		}
	}
	return b.String(), dropped
}

// checkName reports why a trimmed key cannot be carried, or nil. It tests
// eight bytes at a time: keys are short, but every one is checked.
func checkName(name string) error {
	if name == "" {
		return ErrKeyNotCarried
	}
	var sep, nul bool // ',' or '=' found; NUL found
	s := name
	for ; len(s) >= 8; s = s[8:] {
		w := load64(s)
		sep = sep || hasByte(w, ',') || hasByte(w, '=')
		nul = nul || hasByte(w, 0)
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ',', '=':
			sep = true
		case 0:
			nul = true
		}
	}
	switch {
	case sep:
		return ErrKeyNotCarried
	case nul:
		return ErrKeyHasNUL
	}
	return nil
}

// hasByte reports whether any of the eight bytes of w is c.
func hasByte(w uint64, c byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	x := w ^ ones*uint64(c) // a zero byte where w has c
	return (x-ones)&^x&highs != 0
}

// mergeNames merges, in place, the parts whose names are equal: the first
// position, the last value. Up to partsOnStack parts it compares each name
// with the names kept so far; above that it indexes them.
func mergeNames(parts []part) []part {
	out := parts[:0] // out never overtakes the part being read
	if len(parts) <= partsOnStack {
	next:
		for _, p := range parts {
			for i := range out {
				if out[i].name == p.name {
					out[i].v = p.v
					continue next
				}
			}
			out = append(out, p)
		}
		return out
	}
	at := make(map[string]int, len(parts))
	for _, p := range parts {
		if i, ok := at[p.name]; ok {
			out[i].v = p.v
			continue
		}
		at[p.name] = len(out)
		out = append(out, p)
	}
	return out
}

func drop(logger *slog.Logger, key string, reason error) Dropped {
	msg := "resource attribute key cannot be carried in " + EnvVar + "; dropped"
	switch {
	case errors.Is(reason, ErrKeyHasNUL):
		msg = "resource attribute key contains NUL and cannot be carried in " + EnvVar + "; dropped"
	case errors.Is(reason, ErrInvalidUTF8):
		msg = "resource attribute value is not valid UTF-8; dropped"
	}
	logx.Logger(logger, logx.Attributes).Warn(msg, slog.String("key", key))
	return Dropped{Key: key, Err: fmt.Errorf("attribute %q: %w", key, reason)}
}

// Compose returns a new map, as the Python reference's compose_attributes
// does: a copy of defaults, then every entry of current assigned, then every
// entry of overrides assigned (defaults < current < overrides). The empty
// string and null are real values and do override. Key order: the defaults'
// keys, then keys new in current, then keys new in overrides. No input is
// modified and no types are converted. Nil maps are empty. Compose takes
// time linear in the sizes of the three maps.
func Compose(current, defaults, overrides *attr.Map) *attr.Map {
	out := attr.WithCapacity(defaults.Len() + current.Len() + overrides.Len())
	out.Update(defaults)
	out.Update(current)
	out.Update(overrides)
	return out
}

// Extend returns Format(Compose(Parse(text), defaults, overrides)), as the
// Python reference's extend_otel_resource_attributes does: the carrier text a
// child should receive when the parent's carrier is text. It is pure and
// touches no environment. A parse and format round trip re-canonicalises
// escapes, drops malformed segments and collapses duplicate keys to their
// last value. Extend builds one map (the parsed entries are assigned over
// the defaults directly, which gives the same map as Compose), so it takes
// time linear in len(text) and the sizes of defaults and overrides.
func Extend(text string, defaults, overrides *attr.Map) (string, []Dropped) {
	m := attr.WithCapacity(defaults.Len() + parseCapacity(text) + overrides.Len())
	m.Update(defaults)
	if text != "" {
		parseInto(m, text)
	}
	m.Update(overrides)
	return Format(m)
}

// Append returns the inherited segments of text that Parse reads, byte for
// byte and in order, followed by the entries of defaults whose keys text
// does not hold, formatted, after a comma — as the Python reference's
// launcher command (nemo-lens set-slurm-resource-attrs) does
// (docs/compatibility.md#lens-env). The kept segments keep their escapes,
// spaces, duplicates and bytes that are not UTF-8; the segments Parse skips
// — blank ones (`,,`, ` `, a trailing comma), those without '=' (`a`) and
// those whose key is blank (`=1`) — are dropped, as the reference drops
// them before it appends. Keys already in text win, as with Extend(text,
// defaults, nil), whose parsed result is the same map in another order.
func Append(text string, defaults *attr.Map) (string, []Dropped) {
	text = validSegments(text)
	have := Parse(text)
	add := attr.WithCapacity(defaults.Len())
	for k, v := range defaults.All() {
		if !have.Has(pytext.TrimSpace(k)) { // Format writes the key trimmed
			add.Set(k, v)
		}
	}
	tail, dropped := Format(add)
	switch {
	case tail == "":
		return text, dropped
	case text == "":
		return tail, dropped
	}
	return text + "," + tail, dropped
}

// validSegments returns the segments of text that Parse reads (those with
// '=' and a key that is not blank), byte for byte, joined by ','; text
// itself when it has no other segment.
func validSegments(text string) string {
	var b strings.Builder
	all, n := true, 0
	for seg := range strings.SplitSeq(text, ",") {
		if eq := strings.IndexByte(seg, '='); eq < 0 || pytext.TrimSpace(seg[:eq]) == "" {
			all = false
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(seg)
		n++
	}
	if all {
		return text
	}
	return b.String()
}
