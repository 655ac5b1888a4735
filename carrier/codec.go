package carrier

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"unicode/utf8"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/internal/logx"
)

// EnvVar is the name of the carrier variable.
const EnvVar = "OTEL_RESOURCE_ATTRIBUTES"

// Reasons an entry is dropped by [Format]. They are wrapped in [Dropped.Err];
// test with errors.Is.
var (
	// ErrKeyNotCarried: the key is empty after trimming or contains ',' or
	// '=', which no parser can read back (keys are never percent-encoded
	// because SDKs decode only values).
	ErrKeyNotCarried = errors.New("key cannot be carried")
	// ErrInvalidUTF8: a string value is not valid UTF-8 (the Python
	// reference's lone surrogates reach the same outcome).
	ErrInvalidUTF8 = errors.New("value is not valid UTF-8")
)

// Dropped reports one entry that [Format] left out of the carrier, with the
// reason. Null values are omitted silently and are never reported.
type Dropped struct {
	Key string // the original, untrimmed key
	Err error  // wraps ErrKeyNotCarried or ErrInvalidUTF8
}

func (d Dropped) String() string { return fmt.Sprintf("%q: %v", d.Key, d.Err) }

// Parse decodes carrier text into an ordered map of string values, exactly as
// the Python reference's parse_otel_resource_attributes does (SPEC §2.1):
//
//   - split on every ',' (there is no escaping of ',' in the syntax);
//   - skip a segment that has no '=' or whose key trims to empty;
//   - key = the part before the first '=', trimmed ([TrimSpace]), never decoded;
//   - value = the rest, trimmed, then percent-decoded ([Decode]);
//   - a repeated key keeps its first position and takes its last value.
//
// Malformed segments are skipped silently; Parse never fails. The returned
// keys and undecoded values share memory with text.
func Parse(text string) *attr.Map {
	if text == "" {
		return &attr.Map{}
	}
	m := attr.WithCapacity(strings.Count(text, ",") + 1)
	for seg := range strings.SplitSeq(text, ",") {
		k, v, ok := strings.Cut(seg, "=")
		if !ok {
			continue
		}
		k = TrimSpace(k)
		if k == "" {
			continue
		}
		m.Set(k, attr.String(Decode(TrimSpace(v))))
	}
	return m
}

// Format encodes an ordered map as carrier text, byte-for-byte as the Python
// reference's format_otel_resource_attributes does (SPEC §2.4):
//
//   - a null value is skipped silently;
//   - the key is trimmed; an empty key or one containing ',' or '=' is
//     dropped; other characters are kept verbatim, never encoded;
//   - the value is stringified ([attr.Value.Text]: True/False, base-10
//     integers, Python float repr) and every byte outside A-Z a-z 0-9 _ . - ~
//     is percent-encoded ([Encode]); a string that is not valid UTF-8 is
//     dropped;
//   - two keys that trim to the same name: the last value wins at the first
//     position.
//
// Entries are joined with ',' and no trailing comma; an empty map gives "".
// Format never fails as a whole: each dropped entry is returned in dropped
// (in input order) and logged at WARN.
func Format(m *attr.Map) (text string, dropped []Dropped) {
	return format(m, nil)
}

type part struct {
	name string
	text string
}

func format(m *attr.Map, logger *slog.Logger) (string, []Dropped) {
	var (
		dropped []Dropped
		stack   [32]part
	)
	parts := stack[:0]
	size := 0
	for key, v := range m.All() {
		if v.IsNull() {
			continue
		}
		name := TrimSpace(key)
		if name == "" || strings.ContainsAny(name, ",=") {
			dropped = append(dropped, drop(logger, key, ErrKeyNotCarried))
			continue
		}
		text, _ := v.Text()
		if v.Kind() == attr.KindString && !utf8.ValidString(text) {
			dropped = append(dropped, drop(logger, key, ErrInvalidUTF8))
			continue
		}
		p := part{name: name, text: text}
		replaced := false
		for i := range parts {
			if parts[i].name == name {
				size -= encodedLen(parts[i].text)
				parts[i].text = text
				replaced = true
				break
			}
		}
		if !replaced {
			parts = append(parts, p)
			size += len(name) + 2
		}
		size += encodedLen(text)
	}
	if len(parts) == 0 {
		return "", dropped
	}
	var b strings.Builder
	b.Grow(size)
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(p.name)
		b.WriteByte('=')
		appendEncoded(&b, p.text)
	}
	return b.String(), dropped
}

func drop(logger *slog.Logger, key string, reason error) Dropped {
	msg := "resource attribute key cannot be carried in " + EnvVar + "; dropped"
	if errors.Is(reason, ErrInvalidUTF8) {
		msg = "resource attribute value is not valid UTF-8; dropped"
	}
	logx.Logger(logger, logx.Attributes).Warn(msg, slog.String("key", key))
	return Dropped{Key: key, Err: fmt.Errorf("attribute %q: %w", key, reason)}
}

// Compose returns a new map: a copy of defaults, then every entry of current
// assigned, then every entry of overrides assigned (SPEC §3.1). The empty
// string and null are real values and do override. Key order: the defaults'
// keys, then keys new in current, then keys new in overrides. No input is
// modified and no types are converted. Nil maps are empty.
func Compose(current, defaults, overrides *attr.Map) *attr.Map {
	out := attr.WithCapacity(defaults.Len() + current.Len() + overrides.Len())
	out.Update(defaults)
	out.Update(current)
	out.Update(overrides)
	return out
}

// Extend is Format(Compose(Parse(text), defaults, overrides)) (SPEC §3.4): the
// carrier text a child should receive when the parent's carrier is text. It
// is pure and touches no environment. A parse and format round trip
// re-canonicalises escapes, drops malformed segments and collapses duplicate
// keys to their last value.
func Extend(text string, defaults, overrides *attr.Map) (string, []Dropped) {
	return Format(Compose(Parse(text), defaults, overrides))
}
