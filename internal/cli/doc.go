// Package cli holds the parts of the lens command (cmd/lens) that are worth
// testing on their own: an order-preserving JSON codec for attribute maps.
//
// JSON objects are the lens command's structured input (lens carrier format,
// lens carrier extend --defaults/--overrides) and output (lens carrier parse,
// lens detect/resource --format json). Two things the standard library's
// encoding/json cannot do are needed: keeping the key order of an object
// (carrier strings are order-sensitive, so maps are insertion-ordered:
// docs/compatibility.md#go-representation) and keeping the distinction
// between an integer literal and a number with a fraction or an exponent
// (attr.Int64 and attr.Float64 format differently:
// docs/compatibility.md#value-stringification).
//
// The package reads no environment variables and emits no attributes.
package cli
