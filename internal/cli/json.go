package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nemolens/lens-go/attr"
)

const hexDigits = "0123456789abcdef"

// AppendString appends s to b as a JSON string and reports whether s is valid
// UTF-8.
//
// '"', '\\' and the control characters below U+0020 are escaped (\n, \r, \t,
// \b, \f, else \u00XX), and so are U+2028 and U+2029; everything else is
// written as it is. JSON text cannot hold bytes that are not UTF-8, so each
// byte of an invalid sequence is written as \ufffd (the rule of
// encoding/json); valid is false then and the caller should say so, because
// the original bytes are lost.
func AppendString(b []byte, s string) (out []byte, valid bool) {
	valid = true
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			valid = false
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"'), valid
}

// AppendValue appends v to b as a JSON value and reports whether a string
// value was valid UTF-8 (see [AppendString]).
//
//   - string: a JSON string;
//   - int64: a JSON integer;
//   - bool: true or false;
//   - null: null;
//   - float64: the Python repr text of the carrier ([attr.FormatFloat]),
//     which is a valid JSON number ("1.0", "1e+16", "-0.0") for every finite
//     value, so a JSON reader sees a number with a fraction or an exponent
//     and can tell it from an integer. NaN and ±Inf have no JSON number
//     form; they are written as the JSON strings "nan", "inf" and "-inf",
//     the same text a carrier holds for them.
func AppendValue(b []byte, v attr.Value) (out []byte, valid bool) {
	switch v.Kind() {
	case attr.KindString:
		return AppendString(b, v.AsString())
	case attr.KindInt64:
		return strconv.AppendInt(b, v.AsInt64(), 10), true
	case attr.KindBool:
		return strconv.AppendBool(b, v.AsBool()), true
	case attr.KindFloat64:
		t := attr.FormatFloat(v.AsFloat64())
		switch t {
		case "nan", "inf", "-inf":
			return append(append(append(b, '"'), t...), '"'), true
		}
		return append(b, t...), true
	}
	return append(b, "null"...), true
}

// AppendObject appends m to b as one JSON object with its keys in map order
// and no insignificant whitespace. invalid lists, in map order, the keys
// whose key or string value is not valid UTF-8 and was therefore written
// with \ufffd replacements (see [AppendString]). A nil map is "{}".
func AppendObject(b []byte, m *attr.Map) (out []byte, invalid []string) {
	b = append(b, '{')
	first := true
	for k, v := range m.All() {
		if !first {
			b = append(b, ',')
		}
		first = false
		var okKey, okValue bool
		b, okKey = AppendString(b, k)
		b = append(b, ':')
		b, okValue = AppendValue(b, v)
		if !okKey || !okValue {
			invalid = append(invalid, k)
		}
	}
	return append(b, '}'), invalid
}

// ErrNotObject is wrapped by the [SyntaxError] of a JSON text that is valid
// but is not an object.
var ErrNotObject = errors.New("expected a JSON object")

// SyntaxError reports JSON input that [DecodeObject] cannot use, with the
// position of the offending byte.
type SyntaxError struct {
	// Offset is the 0-based byte offset of the offending byte; at the end of
	// the input it is the input's length.
	Offset int
	// Line and Column are 1-based; Column counts bytes, not characters.
	Line, Column int
	// Err is a *json.SyntaxError or wraps ErrNotObject.
	Err error
}

// Error implements error:
// "invalid JSON at line L, column C (byte offset N): reason".
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at line %d, column %d (byte offset %d): %v", e.Line, e.Column, e.Offset, e.Err)
}

// Unwrap returns Err.
func (e *SyntaxError) Unwrap() error { return e.Err }

func syntaxError(data []byte, offset int, err error) *SyntaxError {
	offset = min(max(offset, 0), len(data))
	line := 1 + bytes.Count(data[:offset], []byte{'\n'})
	col := offset - bytes.LastIndexByte(data[:offset], '\n')
	return &SyntaxError{Offset: offset, Line: line, Column: col, Err: err}
}

// Kinds of JSON values that have no attribute form, as reported by
// [DecodeObject].
const (
	KindArray  = "array"
	KindObject = "object"
)

// DecodeObject decodes data, which must hold exactly one JSON object, into
// an ordered attribute map:
//
//   - a string is a string value;
//   - a number written without '.', 'e' or 'E' is an int64; an integer
//     outside the int64 range is kept as its decimal text (a string), which
//     formats into the same carrier text as the Python reference's unbounded
//     int;
//   - any other number is a float64 (strconv.ParseFloat; a magnitude too
//     large gives ±Inf and one too small gives 0, as Python's float());
//   - true and false are booleans;
//   - null is the explicit null of the attribute model;
//   - an array or an object has no attribute form: its key gets a null
//     placeholder and is listed in unsupported (key → KindArray or
//     KindObject), so that a caller can drop it with a message, as the
//     reference drops values of unsupported types.
//
// A repeated key keeps the position of its first occurrence and takes its
// last value, as a Python dict does; unsupported only lists keys whose last
// value is an array or an object. Strings are decoded by encoding/json:
// invalid UTF-8 and lone surrogate escapes become U+FFFD.
//
// Input that is not valid JSON, holds more than one value or is not an
// object gives a *[SyntaxError] with the position of the offending byte.
func DecodeObject(data []byte) (m *attr.Map, unsupported map[string]string, err error) {
	if err := json.Unmarshal(data, new(json.RawMessage)); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off := int(se.Offset) // counts the offending byte itself
			if !strings.Contains(se.Error(), "end of JSON input") {
				off--
			}
			return nil, nil, syntaxError(data, off, se)
		}
		return nil, nil, syntaxError(data, 0, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	start := len(data) - len(bytes.TrimLeft(data, " \t\r\n"))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, syntaxError(data, start, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, syntaxError(data, start, fmt.Errorf("%w, found %s", ErrNotObject, describe(tok)))
	}
	m = &attr.Map{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, syntaxError(data, int(dec.InputOffset()), err)
		}
		key, _ := tok.(string) // valid JSON: object keys are strings
		tok, err = dec.Token()
		if err != nil {
			return nil, nil, syntaxError(data, int(dec.InputOffset()), err)
		}
		var v attr.Value
		switch t := tok.(type) {
		case string:
			v = attr.String(t)
		case json.Number:
			v = number(string(t))
		case bool:
			v = attr.Bool(t)
		case nil:
			v = attr.Null()
		case json.Delim:
			if err := skip(dec); err != nil {
				return nil, nil, syntaxError(data, int(dec.InputOffset()), err)
			}
			m.Set(key, attr.Null())
			if unsupported == nil {
				unsupported = map[string]string{}
			}
			unsupported[key] = KindArray
			if t == '{' {
				unsupported[key] = KindObject
			}
			continue
		}
		m.Set(key, v)
		delete(unsupported, key)
	}
	return m, unsupported, nil
}

// skip consumes the rest of an array or object whose opening delimiter was
// just read.
func skip(dec *json.Decoder) error {
	for depth := 1; depth > 0; {
		tok, err := dec.Token()
		if err == io.EOF {
			return io.ErrUnexpectedEOF
		}
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '[', '{':
				depth++
			default:
				depth--
			}
		}
	}
	return nil
}

func number(s string) attr.Value {
	if !strings.ContainsAny(s, ".eE") {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return attr.Int64(n)
		}
		return attr.String(s)
	}
	f, _ := strconv.ParseFloat(s, 64)
	return attr.Float64(f)
}

func describe(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return "an array"
		}
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", tok)
}
