package carrier

import (
	"strings"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/internal/pytext"
)

// segments calls fn for every segment of text (none for ""), as Parse splits
// it, with its trimmed, undecoded key and its raw value, and ok false for a
// segment Parse skips (no '=', or an empty key).
func segments(text string, fn func(seg, key, rawValue string, ok bool)) {
	if text == "" {
		return
	}
	for {
		seg, rest, more := strings.Cut(text, ",")
		k, v, found := strings.Cut(seg, "=")
		k = pytext.TrimSpace(k)
		fn(seg, k, v, found && k != "")
		if !more {
			return
		}
		text = rest
	}
}

// DuplicateKeys returns the keys that occur more than once in carrier text,
// each once, in the order of their first repetition, as the Python
// reference's duplicate_otel_resource_attribute_keys does: "a=1,b=2,a=3,b=4"
// gives [a b]. Segments are read as [Parse] reads them: keys trimmed, never
// decoded; malformed segments ignored. DuplicateKeys takes time linear in
// len(text): the keys seen are kept in a hash set.
func DuplicateKeys(text string) []string {
	var (
		dups     []string
		reported map[string]bool // key seen → reported as a duplicate
	)
	segments(text, func(_, key, _ string, ok bool) {
		if !ok {
			return
		}
		if reported == nil {
			reported = make(map[string]bool)
		}
		switch done, seen := reported[key]; {
		case !seen:
			reported[key] = false
		case !done:
			reported[key] = true
			dups = append(dups, key)
		}
	})
	return dups
}

// Malformed returns the segments of carrier text that [Parse] skips although
// they are not blank: segments without '=' and segments whose key is empty.
// Blank segments (",," or a trailing comma) are not reported; the reference
// skips them silently too, and they lose nothing. Malformed takes time linear
// in len(text).
func Malformed(text string) []string {
	var bad []string
	segments(text, func(seg, _, _ string, ok bool) {
		if !ok && pytext.TrimSpace(seg) != "" {
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

// Check validates attributes for a launcher, as the Python reference's
// check_resource_attributes does: Missing lists the required keys that are
// absent, Empty the required keys whose value is null or "" (0, false and " "
// are values), Forbidden the forbidden keys that are present (a present null
// counts), each in the order of its input list (repeats included), and
// Duplicates is DuplicateKeys(carrierText) when carrierText is non-empty.
// Check takes time linear in the lengths of its inputs.
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
