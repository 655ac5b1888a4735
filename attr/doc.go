// Package attr is the attribute model of lens-go: typed values ([Value]:
// null, string, bool, int64, float64) and an insertion-ordered map ([Map]).
//
// It exists because the Python reference works on insertion-ordered dicts
// whose values may be None, and carrier strings are order-sensitive
// (docs/compatibility.md#scope): a Go map[string]string can neither keep the order nor tell an
// explicit null from the empty string. Conversions to and from OpenTelemetry
// attributes and resources are provided.
//
// The package reads no environment variables and emits no attributes of its
// own.
package attr
