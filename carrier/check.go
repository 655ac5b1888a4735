package carrier

import (
	"slices"
	"strings"

	"github.com/nemolens/lens-go/attr"
)

// segments calls fn for every segment of text that Parse would read, with its
// trimmed, undecoded key and raw value, and for every segment it would skip
// with ok false.
func segments(text string, fn func(seg, key, rawValue string, ok bool)) {
	if text == "" {
		return
	}
	for seg := range strings.SplitSeq(text, ",") {
		k, v, found := strings.Cut(seg, "=")
		k = TrimSpace(k)
		fn(seg, k, v, found && k != "")
	}
}

// DuplicateKeys returns the keys that occur more than once in carrier text,
// each once, in the order of their first repetition (SPEC §3.5). Segments are
// read as [Parse] reads them: keys trimmed, never decoded; malformed segments
// ignored.
func DuplicateKeys(text string) []string {
	var seen, dups []string
	segments(text, func(_, key, _ string, ok bool) {
		if !ok {
			return
		}
		if !slices.Contains(seen, key) {
			seen = append(seen, key)
		} else if !slices.Contains(dups, key) {
			dups = append(dups, key)
		}
	})
	return dups
}

// Malformed returns the segments of carrier text that [Parse] skips although
// they are not blank: segments without '=' and segments whose key is empty.
// Blank segments (",," or a trailing comma) are not reported; the reference
// skips them silently too, and they lose nothing.
func Malformed(text string) []string {
	var bad []string
	segments(text, func(seg, _, _ string, ok bool) {
		if !ok && TrimSpace(seg) != "" {
			bad = append(bad, seg)
		}
	})
	return bad
}

// CheckResult is the outcome of [Check]. Each list keeps the order of the
// inputs it was computed from.
type CheckResult struct {
	Missing    []string // required keys that are absent
	Empty      []string // required keys whose value is null or ""
	Forbidden  []string // forbidden keys that are present
	Duplicates []string // keys repeated in the carrier text (see DuplicateKeys)
}

// OK reports whether nothing was found.
func (r CheckResult) OK() bool {
	return len(r.Missing)+len(r.Empty)+len(r.Forbidden)+len(r.Duplicates) == 0
}

// Check validates attributes for a launcher (SPEC §3.5): required keys must be
// present with a non-empty, non-null value, forbidden keys must be absent,
// and the carrier text, when non-empty, must not repeat a key.
func Check(attrs *attr.Map, required, forbidden []string, carrierText string) CheckResult {
	var r CheckResult
	for _, k := range required {
		v, ok := attrs.Get(k)
		switch {
		case !ok:
			r.Missing = append(r.Missing, k)
		case v.IsNull() || (v.Kind() == attr.KindString && v.AsString() == ""):
			r.Empty = append(r.Empty, k)
		}
	}
	for _, k := range forbidden {
		if attrs.Has(k) {
			r.Forbidden = append(r.Forbidden, k)
		}
	}
	if carrierText != "" {
		r.Duplicates = DuplicateKeys(carrierText)
	}
	return r
}
