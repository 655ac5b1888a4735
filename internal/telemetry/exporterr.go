package telemetry

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxErrorText is the most bytes of an error's own text that Lens shows in
// a message (docs/resource.md#export-errors): a collector's or proxy's
// error page (an OTLP/HTTP error quotes the response body, a gRPC error
// the status message) is cut after it.
const MaxErrorText = 256

// ShapedError is an error as Lens reports it (see [ShapeError]): its
// message is safe to print on one line; Unwrap returns the original.
type ShapedError struct {
	text string
	err  error
}

// Error returns the shaped message.
func (e *ShapedError) Error() string { return e.text }

// Unwrap returns the original error.
func (e *ShapedError) Unwrap() error { return e.err }

// ShapeError is the one place that shapes an export error's message for
// logs and stderr (docs/resource.md#export-errors). The returned error
// wraps err (errors.Is and errors.As see through it) and its message:
//
//   - never shows secrets: each of secrets (the OTLP header values, see
//     Settings.Secrets) is replaced by "[redacted]", and [Redact] masks
//     URL credentials and the value of a variable an exporter reports as
//     invalid;
//   - is one line of printable text: control characters and invalid UTF-8
//     are escaped as strconv.Quote escapes them (a newline is `\n`);
//   - is at most MaxErrorText bytes of the original text, followed by
//     "… (N bytes cut)" when longer.
//
// The errors of a join (errors.Join) are shaped one by one and joined
// again with newlines; an error already shaped, or a join of errors
// already shaped, is returned as it is, and the text around a shaped error
// that another error wraps is not cut again.
func ShapeError(err error, secrets []string) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(*ShapedError); ok {
		return err
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs := j.Unwrap()
		shaped := make([]error, 0, len(errs))
		same := true
		for _, e := range errs {
			s := ShapeError(e, secrets)
			same = same && s == e
			shaped = append(shaped, s)
		}
		if same {
			// Every error is shaped already: the join's own message
			// (errors.Join's lines, or another layout) stays.
			return err
		}
		return &ShapedError{text: errors.Join(shaped...).Error(), err: err}
	}
	var inner *ShapedError
	limit := MaxErrorText
	if errors.As(err, &inner) {
		limit = -1
	}
	return &ShapedError{text: shapeText(err.Error(), secrets, limit), err: err}
}

// shapeText redacts, escapes and cuts s (limit < 0: not cut).
func shapeText(s string, secrets []string, limit int) string {
	if len(secrets) > 0 {
		sorted := slices.SortedFunc(slices.Values(secrets), func(a, b string) int { return cmp.Compare(len(b), len(a)) })
		for _, secret := range sorted {
			if secret != "" {
				s = strings.ReplaceAll(s, secret, "[redacted]")
			}
		}
	}
	s = escapeControl(Redact(s))
	if limit < 0 {
		return s
	}
	return cutText(s, limit, 0)
}

// cutText cuts s after limit bytes (at a rune start), counting more bytes
// beyond s as cut too.
func cutText(s string, limit int, more int64) string {
	if len(s) <= limit && more == 0 {
		return s
	}
	cut := min(limit, len(s))
	for cut > 0 && cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes cut)", s[:cut], int64(len(s)-cut)+more)
}

// ShapeText shapes a tool's message s (sacct's stderr) as ShapeError shapes
// an error's text: URL credentials masked, one line of printable text, at
// most MaxErrorText bytes; more counts the bytes of the message that were
// not kept (a stream read in part) as cut too.
func ShapeText(s string, more int64) string {
	return cutText(escapeControl(Redact(s)), MaxErrorText, more)
}

// escapeControl escapes what is not printable in s — control characters,
// invalid UTF-8, other non-printing runes — as strconv.Quote does, and
// keeps the rest.
func escapeControl(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case unicode.IsPrint(r):
			b.WriteString(s[:n])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		s = s[n:]
	}
	return b.String()
}
