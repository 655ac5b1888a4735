package telemetry

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
)

// Invalid UTF-8 (docs/resource.md#invalid-utf-8): OTLP strings are protobuf
// string fields, which must be valid UTF-8; one invalid byte anywhere in an
// export makes the marshalling of the whole request fail ("string field
// contains invalid UTF-8"), so that nothing of the batch — nor of any later
// batch carrying the same resource — reaches the collector. Lens therefore
// exports every string with each maximal run of invalid bytes replaced by
// U+FFFD (strings.ToValidUTF8) and reports the attribute, once, by key and
// never by value.

// replacement is what each run of invalid bytes becomes.
const replacement = "\uFFFD"

// ValidString returns s with every run of bytes that are not valid UTF-8
// replaced by U+FFFD, and whether it replaced anything.
func ValidString(s string) (string, bool) {
	if utf8.ValidString(s) {
		return s, false
	}
	return strings.ToValidUTF8(s, replacement), true
}

// ValidValue returns v with its strings valid UTF-8 (strings, string
// slices, and the elements, keys and values of slices and maps, at any
// depth), and whether it replaced anything. Byte slices are bytes on the
// wire and stay as they are.
func ValidValue(v attribute.Value) (attribute.Value, bool) {
	switch v.Type() {
	case attribute.STRING:
		if s, changed := ValidString(v.AsString()); changed {
			return attribute.StringValue(s), true
		}
	case attribute.STRINGSLICE:
		ss := v.AsStringSlice()
		changed := false
		for i, s := range ss {
			if t, c := ValidString(s); c {
				ss[i], changed = t, true // AsStringSlice returns a copy
			}
		}
		if changed {
			return attribute.StringSliceValue(ss), true
		}
	case attribute.SLICE:
		vs := v.AsSlice()
		changed := false
		for i, e := range vs {
			if w, c := ValidValue(e); c {
				vs[i], changed = w, true // AsSlice returns a copy
			}
		}
		if changed {
			return attribute.SliceValue(vs...), true
		}
	case attribute.MAP:
		if kvs, changed := ValidKeyValues(v.AsMap(), nil); changed {
			return attribute.MapValue(kvs...), true
		}
	}
	return v, false
}

// isValid reports whether v's strings are valid UTF-8 (see ValidValue).
func isValid(v attribute.Value) bool {
	if v.Type() == attribute.STRING {
		return utf8.ValidString(v.AsString())
	}
	_, changed := ValidValue(v)
	return !changed
}

// validKeyValues reports whether the keys and values of kvs are valid
// UTF-8; it allocates only for slice and map values.
func validKeyValues(kvs []attribute.KeyValue) bool {
	for _, kv := range kvs {
		if !utf8.ValidString(string(kv.Key)) || !isValid(kv.Value) {
			return false
		}
	}
	return true
}

// ValidKeyValues returns kvs with valid UTF-8 keys and values, and whether
// it replaced anything. kvs is never modified: a changed list is a copy.
// invalid, when not nil, is called with the (valid) key of every attribute
// it changed.
func ValidKeyValues(kvs []attribute.KeyValue, invalid func(key string)) ([]attribute.KeyValue, bool) {
	var out []attribute.KeyValue
	for i, kv := range kvs {
		k, kc := ValidString(string(kv.Key))
		v, vc := ValidValue(kv.Value)
		if !kc && !vc {
			continue
		}
		if out == nil {
			out = make([]attribute.KeyValue, len(kvs))
			copy(out, kvs)
		}
		out[i] = attribute.KeyValue{Key: attribute.Key(k), Value: v}
		if invalid != nil {
			invalid(k)
		}
	}
	if out == nil {
		return kvs, false
	}
	return out, true
}

// ValidSet is ValidKeyValues for an attribute set.
func ValidSet(s attribute.Set, invalid func(key string)) (attribute.Set, bool) {
	if s.Len() == 0 {
		return s, false
	}
	kvs, changed := ValidKeyValues(s.ToSlice(), invalid)
	if !changed {
		return s, false
	}
	return attribute.NewSet(kvs...), true
}

// InvalidUTF8Message is the report of an attribute (or other string) that
// was exported with U+FFFD in place of invalid UTF-8: what names it
// ("resource attribute host.name", "span name"), source says where its value
// came from ("" when unknown). The value is never part of it: it may be a
// secret.
func InvalidUTF8Message(what, source string) string {
	msg := what
	if source != "" {
		msg += " (from " + source + ")"
	}
	return msg + " is not valid UTF-8: exported with U+FFFD in place of each invalid byte sequence (the value is not shown)"
}

// AttributeName names the attribute key in a report: as it is when it is
// printable, else Go-quoted, so that the report stays one line.
func AttributeName(key string) string {
	if key != "" && strconv.CanBackquote(key) && !strings.ContainsAny(key, " `") {
		return key
	}
	return strconv.Quote(key)
}

// ValidScope makes the strings of an instrumentation scope valid UTF-8 in
// place, reporting each one it changed, and reports whether it changed
// anything.
func ValidScope(s *instrumentation.Scope, invalid func(what, source string)) bool {
	changed := ValidStrings(invalid,
		Field{&s.Name, "instrumentation scope name"},
		Field{&s.Version, "instrumentation scope version"},
		Field{&s.SchemaURL, "instrumentation scope schema URL"})
	var c bool
	s.Attributes, c = ValidSet(s.Attributes, ReportKey(invalid, "instrumentation scope attribute "))
	return changed || c
}

// Field is a string to make valid and what it is, for the report.
type Field struct {
	S    *string
	What string
}

// ValidStrings makes the strings of fs valid UTF-8 in place, reporting
// each one it changed, and reports whether it changed anything.
func ValidStrings(invalid func(what, source string), fs ...Field) bool {
	changed := false
	for _, f := range fs {
		var c bool
		if *f.S, c = ValidString(*f.S); c {
			changed = true
			invalid(f.What, "")
		}
	}
	return changed
}

// ReportKey returns a function that reports the attribute key as
// what+key.
func ReportKey(invalid func(what, source string), what string) func(string) {
	return func(key string) { invalid(what+AttributeName(key), "") }
}
