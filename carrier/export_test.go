package carrier

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/internal/pytext"
)

// The implementations of Decode, Parse, Format and DuplicateKeys as they were
// before they were rewritten to run in linear time, kept verbatim (apart from
// the NUL-key rule, added to oldFormat) as references for the fuzz tests:
// the rewritten functions must return exactly what these return. They are
// slow on purpose (quadratic in the number of entries) and test-only.
var (
	OldDecode        = oldDecode
	OldParse         = oldParse
	OldFormat        = oldFormat
	OldDuplicateKeys = oldDuplicateKeys
)

func oldParse(text string) *attr.Map {
	if text == "" {
		return &attr.Map{}
	}
	m := attr.WithCapacity(strings.Count(text, ",") + 1)
	for seg := range strings.SplitSeq(text, ",") {
		k, v, ok := strings.Cut(seg, "=")
		if !ok {
			continue
		}
		k = pytext.TrimSpace(k)
		if k == "" {
			continue
		}
		m.Set(k, attr.String(oldDecode(pytext.TrimSpace(v))))
	}
	return m
}

func oldDuplicateKeys(text string) []string {
	if text == "" {
		return nil
	}
	var seen, dups []string
	for seg := range strings.SplitSeq(text, ",") {
		k, _, found := strings.Cut(seg, "=")
		key := pytext.TrimSpace(k)
		if !found || key == "" {
			continue
		}
		if !slices.Contains(seen, key) {
			seen = append(seen, key)
		} else if !slices.Contains(dups, key) {
			dups = append(dups, key)
		}
	}
	return dups
}

type oldPart struct {
	name string
	text string
}

func oldFormat(m *attr.Map) (string, []Dropped) {
	var (
		dropped []Dropped
		stack   [32]oldPart
	)
	parts := stack[:0]
	size := 0
	for key, v := range m.All() {
		if v.IsNull() {
			continue
		}
		name := pytext.TrimSpace(key)
		// The NUL rule is the one intended change of behaviour.
		if name == "" || strings.ContainsAny(name, ",=") || strings.IndexByte(name, 0) >= 0 {
			dropped = append(dropped, drop(nil, key, ErrKeyNotCarried))
			continue
		}
		text, _ := v.Text()
		if v.Kind() == attr.KindString && !utf8.ValidString(text) {
			dropped = append(dropped, drop(nil, key, ErrInvalidUTF8))
			continue
		}
		p := oldPart{name: name, text: text}
		replaced := false
		for i := range parts {
			if parts[i].name == name {
				size -= oldEncodedLen(parts[i].text)
				parts[i].text = text
				replaced = true
				break
			}
		}
		if !replaced {
			parts = append(parts, p)
			size += len(name) + 2
		}
		size += oldEncodedLen(text)
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
		oldAppendEncoded(&b, p.text)
	}
	return b.String(), dropped
}

func oldEncodedLen(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		if shouldEscape(s[i]) {
			n += 2
		}
	}
	return n
}

func oldAppendEncoded(b *strings.Builder, s string) {
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !shouldEscape(c) {
			continue
		}
		b.WriteString(s[start:i])
		b.WriteByte('%')
		b.WriteByte(upperhex[c>>4])
		b.WriteByte(upperhex[c&15])
		start = i + 1
	}
	b.WriteString(s[start:])
}

func oldUnhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func oldDecode(s string) string {
	pct := strings.IndexByte(s, '%')
	if pct < 0 {
		return s
	}
	var (
		b   strings.Builder
		buf [64]byte
	)
	b.Grow(len(s))
	i := 0
	for i < len(s) {
		if s[i] >= utf8.RuneSelf { // a non-ASCII run: verbatim
			j := i + 1
			for j < len(s) && s[j] >= utf8.RuneSelf {
				j++
			}
			b.WriteString(s[i:j])
			i = j
			continue
		}
		j := i + 1
		for j < len(s) && s[j] < utf8.RuneSelf {
			j++
		}
		run := s[i:j]
		i = j
		if strings.IndexByte(run, '%') < 0 {
			b.WriteString(run)
			continue
		}
		raw := buf[:0]
		for k := 0; k < len(run); k++ {
			c := run[k]
			if c == '%' && k+2 < len(run) {
				hi, ok1 := oldUnhex(run[k+1])
				lo, ok2 := oldUnhex(run[k+2])
				if ok1 && ok2 {
					raw = append(raw, hi<<4|lo)
					k += 2
					continue
				}
			}
			raw = append(raw, c)
		}
		oldWriteUTF8Replace(&b, raw)
	}
	return b.String()
}

func oldWriteUTF8Replace(b *strings.Builder, p []byte) {
	for len(p) > 0 {
		c := p[0]
		if c < utf8.RuneSelf {
			b.WriteByte(c)
			p = p[1:]
			continue
		}
		n := oldValidPrefix(p)
		if n > 0 {
			b.Write(p[:n])
			p = p[n:]
			continue
		}
		b.WriteRune(utf8.RuneError)
		p = p[oldMaximalSubpart(p):]
	}
}

func oldValidPrefix(p []byte) int {
	r, size := utf8.DecodeRune(p)
	if r == utf8.RuneError && size <= 1 {
		return 0
	}
	return size
}

func oldMaximalSubpart(p []byte) int {
	c := p[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF) // range of the second byte
	switch {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		need = 2
	case c == 0xED:
		need, hi = 2, 0x9F
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default: // 0x80–0xC1, 0xF5–0xFF never start a sequence
		return 1
	}
	n := 1
	for k := 1; k <= need && k < len(p); k++ {
		if k == 1 {
			if p[k] < lo || p[k] > hi {
				break
			}
		} else if p[k] < 0x80 || p[k] > 0xBF {
			break
		}
		n++
	}
	return n
}

// ValidUTF8 is exported for FuzzValidUTF8.
var ValidUTF8 = validUTF8

// CheckName is exported for FuzzCheckName.
var CheckName = checkName
