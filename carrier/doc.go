// Package carrier is the OTEL_RESOURCE_ATTRIBUTES codec of lens-go: it
// reads, writes, composes and checks the "carrier", the one channel that
// hands resource attributes from a process to the processes it starts
// (SPEC §1.7, §1.8). Go and Python processes of one job share it, so every
// function here reproduces the NeMo Lens (Python) reference byte for byte
// (SPEC §0, §2, §3, §4).
//
// # Environment
//
// The package reads and writes one variable, OTEL_RESOURCE_ATTRIBUTES
// ([EnvVar]), always through an injected environment: a [environ.Lookuper] for
// reads, an [Env] for writes, nil meaning the live process environment
// ([environ.OS]), which is read at call time and never snapshotted. [environ.Map] is
// an in-memory environment. [Get] reads it; [Set], [Begin] and [Publish]
// write it; [ChildEnv] builds a child's environment without writing any.
// The package emits no resource attributes of its own; it carries whatever
// attributes callers give it.
//
// # Syntax and escaping
//
// A carrier is "key=value" segments joined with ','. [Parse] splits on every
// ',', cuts at the first '=', trims keys and values with Python's str.strip
// whitespace set ([TrimSpace]: Go's unicode.IsSpace plus U+001C–U+001F),
// never decodes keys, and percent-decodes values with [Decode]; malformed
// segments are skipped silently and a repeated key keeps its first position
// with its last value. [Format] stringifies values as Python does (True and
// False, base-10 integers, Python float repr via [attr.FormatFloat]) and
// percent-encodes them with [Encode].
//
// The escaping rules and their sources:
//
//   - Encoding is Python's urllib.parse.quote(value, safe=""): every byte of
//     the UTF-8 form is encoded as %XX with uppercase hex, except the
//     unreserved characters of RFC 3986 §2.3 (A-Z a-z 0-9 _ . - ~). Space is
//     %20 and '+' is %2B. Keys are never encoded, because SDKs decode only
//     values; a key containing ',' or '=' is dropped instead
//     ([ErrKeyNotCarried]).
//   - Decoding is Python's urllib.parse.unquote(value) (UTF-8,
//     errors="replace"): each run of ASCII bytes is decoded on its own, %XY
//     with two hex digits becomes a byte and everything else (a lone '%',
//     '+') is kept; the bytes are then read as UTF-8 and each maximal
//     invalid subpart becomes one U+FFFD, the "substitution of maximal
//     subparts" practice of the Unicode Standard §3.9 (Table 3-8) that
//     Python and the WHATWG Encoding Standard follow. '+' never becomes a
//     space.
//
// net/url's PathUnescape and QueryUnescape are deliberately not used: they
// fail on a malformed '%' and then decode nothing (the OpenTelemetry Go
// SDK keeps such a value raw and untrimmed), QueryUnescape turns '+' into a
// space, and neither replaces invalid UTF-8. strings.ToValidUTF8 and
// utf8.DecodeRune do not count replacements as Python does (a truncated
// sequence such as E2 82 gives one U+FFFD, not two), hence a dedicated
// decoder. For the same reason the SDK's own parser (resource.WithFromEnv)
// must never be used to obtain the carrier map; SPEC §2.6 and §11.1 list
// the differences.
//
// # Divergences from the Python reference
//
// These are intentional and follow SPEC §4 and §10:
//
//   - Integers are int64. [ParseInt] rejects values outside
//     [-2^63, 2^63-1], which Python's unbounded int accepts.
//   - Strings are bytes. Raw bytes that are not valid UTF-8 (possible in a
//     Go environment) are passed through by [Parse] verbatim, never trimmed
//     and never replaced; [Format] drops a string value that is not valid
//     UTF-8 and reports it ([ErrInvalidUTF8]). Python reaches the same
//     carriers through lone surrogates.
//   - Dropped entries are returned as [Dropped] values (with errors
//     wrapping [ErrKeyNotCarried] or [ErrInvalidUTF8]) as well as logged at
//     WARN under the reference's logger name
//     (nemo.lens.resources.attributes).
//   - Types Python can hold but Go cannot (a None key, bytes, lists) have no
//     form in [attr.Value], so the corresponding warnings cannot occur.
//
// # Concurrency
//
// The process environment is shared by every goroutine. Python Lens does no
// locking and asks callers to serialise publications; lens-go does it for
// them: [Begin] and [Publish] are serialised across goroutines by the one
// piece of global state in lens-go, a one-slot guard that an outermost
// publication holds until it ends (waiting, or failing when its context is
// done). Publications nest through the context that the enclosing one
// passes on and must end in last-in, first-out order; [Publication.End]
// restores out-of-order ends as correct LIFO ends would have and reports
// [ErrOutOfOrder]. Restores write back the exact previous value, including
// "", or delete a variable that did not exist.
//
// Go programs that start their own children should not publish at all:
// [ChildEnv] returns an environment for exec.Cmd.Env with the composed
// carrier and never touches the process environment, so any number of
// goroutines may use it at once. [Publish] is for children the program does
// not start itself (a library that calls exec, an embedded interpreter).
// The other functions are pure and safe for concurrent use.
package carrier
