// Package carrier is the OTEL_RESOURCE_ATTRIBUTES codec of lens-go: it
// reads, writes, composes and checks the "carrier", the one channel that
// hands resource attributes from a process to the processes it starts, the
// only one that survives fork, exec and spawn. Go and Python processes of
// one job share it and derive the job's identity from it, so every function
// here reproduces the NeMo Lens (Python) reference byte for byte, malformed
// input included; the few intentional divergences are listed below.
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
// whitespace set (Go's unicode.IsSpace plus U+001C–U+001F,
// docs/compatibility.md#whitespace),
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
//     values; a key containing ',' or '=' (or NUL, see below) is dropped
//     instead ([ErrKeyNotCarried]).
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
// must never be used to obtain the carrier map: it trims the whole variable
// with strings.TrimSpace (missing U+001C–U+001F), keeps a value that has an
// invalid escape raw and untrimmed instead of decoding the rest, keeps
// invalid UTF-8 instead of replacing it, and reports malformed segments as
// a partial resource.
//
// # Cost
//
// [Parse], [Decode], [Encode], [Format], [Compose], [Extend], [DuplicateKeys],
// [Malformed] and [Check] take time linear in the size of their input,
// whatever the number of entries and the size of the values: no entry is
// compared with every other one, repeated keys and names are found through
// hash indexes ([attr.Map] keeps one above 48 keys), and a value is decoded
// or encoded in one pass with one allocation for the result.
// carrier/linear_test.go checks this by counting instructions (Valgrind);
// carrier/bench_test.go compares the costs with the OpenTelemetry Go SDK's
// parser and with single-pass floors, from 1 to 10,000 entries and from 10
// bytes to 100 KiB per value.
//
// # Divergences from the Python reference
//
// These are intentional:
//
//   - Integers are int64. The integer rule (docs/compatibility.md#integer-rule)
//     rejects values outside [-2^63, 2^63-1], which Python's unbounded int
//     accepts.
//   - Strings are bytes. Raw bytes that are not valid UTF-8 (possible in a
//     Go environment) are passed through by [Parse] verbatim, never trimmed
//     and never replaced; [Format] drops a string value that is not valid
//     UTF-8 and reports it ([ErrInvalidUTF8]). Python reaches the same
//     carriers through lone surrogates.
//   - A key that contains NUL after trimming is dropped by [Format] and
//     reported with [ErrKeyHasNUL] (which wraps [ErrKeyNotCarried]). No
//     environment variable can hold NUL, and exec rejects an environment
//     that contains one, so a child could never receive such a carrier. The
//     reference keeps the key verbatim, unencoded; the carrier it formats
//     then fails when it is assigned to os.environ (ValueError: embedded
//     null byte). [Parse] still returns such keys, as the reference does.
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
