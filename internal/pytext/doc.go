// Package pytext implements the Python text rules that lens-go's carrier
// codec, detection and configuration share, once:
//
//   - [IsSpace] and [TrimSpace]: the whitespace set of Python's str.strip()
//     (docs/compatibility.md#whitespace);
//   - [ParseInt]: the strict integer rule of the reference's carrier values
//     (docs/compatibility.md#integer-rule);
//   - [IsIntSpace], [IntText] and [Int]: Python's int(s), where the
//     reference uses it (docs/compatibility.md#python-int).
//
// It is internal: its functions are an implementation detail of packages
// carrier, detect, internal/telemetry, the root package and the lens
// command. No function panics; invalid UTF-8 is never trimmed.
package pytext
