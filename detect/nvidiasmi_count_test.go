package detect

import (
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// gpuCountOutputs are standard outputs of `nvidia-smi --query-gpu=count
// --format=csv,noheader` exiting with status 0, and the count GPUCount gives
// for them. ref is the reference's count (len of the non-blank lines of the
// UTF-8-decoded, universal-newline text; -1: none); it differs from want
// only where the port diverges on purpose (a non-blank line that is not a
// base-10 integer). The rows drive TestCountGPURecords, the fault-injection
// test that prints them from a fake nvidia-smi, and seed
// FuzzCountGPURecords.
var gpuCountOutputs = []struct {
	name string
	out  string
	want int // -1: no count
	ref  int // -1: no count
}{
	{"eight GPUs", strings.Repeat("8\n", 8), 8, 8},
	{"no final newline", "1", 1, 1},
	{"LF", "2\n2\n", 2, 2},
	{"CRLF", "2\r\n2\r\n", 2, 2},
	{"lone CR", "1\r1\r", 2, 2},
	{"CR CR LF", "3\r\r\n3\r\n3", 3, 3},
	{"blank lines", "2\n\n  \r\n2\n", 2, 2},
	{"CR without a final break", "1\r2", 2, 2},
	{"CR CR", "1\r\r2\r", 2, 2},
	{"only CR", "\r", -1, -1},
	{"only CRLF", "\r\n", -1, -1},
	{"LF CR", "\n\r", -1, -1},
	// Universal newlines break lines at "\n", "\r\n" and "\r" only. Each
	// of VT, FF, FS, GS, RS, NEL, LS and PS breaks no line (str.splitlines
	// would break there), but it is Python whitespace, stripped at either
	// end of a line. Inside a line it makes the line one record that is not
	// an integer: the reference counts 1, the port gives no count.
	{"VT is stripped", "2\v\n2\v\n", 2, 2},
	{"VT inside a line", "1\v2\n", -1, 1},
	{"FF is stripped", "2\f\n2\f\n", 2, 2},
	{"FF inside a line", "1\f2\n", -1, 1},
	{"FS is stripped", "2\x1c\n2\x1c\n", 2, 2},
	{"FS inside a line", "1\x1c2\n", -1, 1},
	{"GS is stripped", "2\x1d\n2\x1d\n", 2, 2},
	{"GS inside a line", "1\x1d2\n", -1, 1},
	{"RS is stripped", "2\x1e\n2\x1e\n", 2, 2},
	{"RS inside a line", "1\x1e2\n", -1, 1},
	{"NEL is stripped", "2\u0085\n2\u0085\n", 2, 2},
	{"NEL inside a line", "1\u00852\n", -1, 1},
	{"LS is stripped", "2\u2028\n2\u2028\n", 2, 2},
	{"LS inside a line", "1\u20282\n", -1, 1},
	{"PS is stripped", "2\u2029\n2\u2029\n", 2, 2},
	{"PS inside a line", "1\u20292\n", -1, 1},
	{"VT FF FS GS RS NEL LS PS: one line", "6\v6\f6\x1c6\x1d6\x1e6\u00856\u20286\u2029", -1, 1},
	{"VT FF FS GS RS NEL LS PS alone: blank", "\v\f\x1c\x1d\x1e\u0085\u2028\u2029\n", -1, -1},
	{"US is whitespace, not a break", "\x1f1\x1f\n", 1, 1},
	{"Python whitespace stripped", " \t1\u00a0\u3000\n\u20051\n", 2, 2},
	{"a count of zero is still a record", "0\n", 1, 1},
	{"long integer", "0001234567890123456789\n", 1, 1},
	{"empty", "", -1, -1},
	{"only blank lines", "\n \n\t\n\r\n\v\u00a0\n", -1, -1},
	{"invalid UTF-8", "1\n\xff\n", -1, -1},
	{"UTF-8 surrogate", "1\n\xed\xa0\x80\n", -1, -1},
	{"overlong UTF-8", "\xc0\xb1\n", -1, -1},
	{"truncated UTF-8", "1\n1\xe2\x80", -1, -1},
	// Divergences: the reference counts every non-blank line.
	{"error text with exit 0", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n", -1, 1},
	{"garbage after records", "1\n1\nWARNING: infoROM is corrupted\n", -1, 3},
	{"N/A", "[N/A]\n", -1, 1},
	{"plus sign", "+1\n", -1, 1},
	{"minus sign", "-1\n", -1, 1},
	{"hexadecimal", "0x1\n", -1, 1},
	{"decimal point", "1.0\n", -1, 1},
	{"underscore", "1_0\n", -1, 1},
	{"non-ASCII digit", "\u0663\n", -1, 1},
	{"inner space", "1 1\n", -1, 1},
	{"NUL", "1\x00\n", -1, 1},
	{"byte order mark", "\ufeff1\n", -1, 1},
	{"CSV header", "count\n1\n", -1, 2},
}

func TestCountGPURecords(t *testing.T) {
	t.Parallel()
	for _, c := range gpuCountOutputs {
		n, ok := countGPURecords([]byte(c.out))
		if c.want < 0 {
			if ok {
				t.Errorf("%s: countGPURecords(%q) = %d, true; want no count", c.name, c.out, n)
			}
		} else if !ok || n != c.want {
			t.Errorf("%s: countGPURecords(%q) = %d, %v; want %d, true", c.name, c.out, n, ok, c.want)
		}
		// The reference model of the test agrees with the table's ref
		// column, so the table states the reference's behaviour.
		if got := referenceCount(c.out); got != c.ref {
			t.Errorf("%s: reference model counts %d, the table says %d", c.name, got, c.ref)
		}
	}
}

func TestOutputLines(t *testing.T) {
	t.Parallel()
	// What Python's text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
	// gives (universal newlines, then the split at "\n"), without the empty
	// string after a final break.
	cases := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"\n", []string{""}},
		{"a", []string{"a"}},
		{"a\n", []string{"a"}},
		{"a\n\nb", []string{"a", "", "b"}},
		{"a\r\nb\rc\n", []string{"a", "b", "c"}},
		{"a\r\r\nb", []string{"a", "", "b"}},
		{"\r\n\r", []string{"", ""}},
		{"a\rb", []string{"a", "b"}},
		{"\r", []string{""}},
		{"a\n\r\nb\r", []string{"a", "", "b"}},
		{"a\vb\fc\x1cd\x1de\x1ef\x1fg", []string{"a\vb\fc\x1cd\x1de\x1ef\x1fg"}},
		{"a\u0085b\u2028c\u2029", []string{"a\u0085b\u2028c\u2029"}},
		{"\v\n\f", []string{"\v", "\f"}},
		{"a\u2027b\u00a0c", []string{"a\u2027b\u00a0c"}},
	}
	for _, c := range cases {
		lines, ok := outputLines([]byte(c.in))
		if !ok {
			t.Errorf("outputLines(%q) rejected valid UTF-8", c.in)
			continue
		}
		var got []string
		for l := range lines {
			got = append(got, l)
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") || len(got) != len(c.want) {
			t.Errorf("outputLines(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if _, ok := outputLines([]byte("1\n\x80")); ok {
		t.Error("outputLines accepted invalid UTF-8")
	}
	// Stopping early stops the sequence.
	lines, _ := outputLines([]byte("a\nb\nc"))
	for l := range lines {
		if l != "a" {
			t.Errorf("line %q after break", l)
		}
		break
	}
}

// decimalLine is the record rule, written independently of isDecimal.
var decimalLine = regexp.MustCompile(`^[0-9]+$`)

// referenceCount models the reference and GPUCount's record rule
// independently of the code under test. It returns the reference's count of
// out (-1: none) when strict is false, and GPUCount's when strict is true.
func referenceCountMode(out string, strict bool) int {
	if !utf8.ValidString(out) { // text=True decodes strictly
		return -1
	}
	// Universal newlines turn "\r\n" and every other "\r" into "\n"; the
	// lines are then split at "\n" and nothing else.
	s := strings.ReplaceAll(strings.ReplaceAll(out, "\r\n", "\n"), "\r", "\n")
	n := 0
	for _, f := range strings.Split(s, "\n") {
		f = strings.TrimFunc(f, func(r rune) bool { return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f })
		if f == "" {
			continue
		}
		if strict && !decimalLine.MatchString(f) {
			return -1
		}
		n++
	}
	if n == 0 {
		return -1
	}
	return n
}

func referenceCount(out string) int { return referenceCountMode(out, false) }

func FuzzCountGPURecords(f *testing.F) {
	for _, c := range gpuCountOutputs {
		f.Add([]byte(c.out))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		n, ok := countGPURecords(out)
		want := referenceCountMode(string(out), true)
		if got := map[bool]int{true: n, false: -1}[ok]; got != want {
			t.Fatalf("countGPURecords(%q) = %d, %v; the model gives %d", out, n, ok, want)
		}
		if ok && n != referenceCount(string(out)) {
			t.Fatalf("countGPURecords(%q) = %d, the reference counts %d", out, n, referenceCount(string(out)))
		}
		lines, valid := outputLines(out)
		if valid != utf8.Valid(out) {
			t.Fatalf("outputLines(%q) ok = %v", out, valid)
		}
		if !valid {
			return
		}
		// The lines hold no break, and the lines plus the breaks between
		// them are the whole output.
		var b strings.Builder
		s := string(out)
		for l := range lines {
			if strings.ContainsAny(l, "\r\n") {
				t.Fatalf("line %q of %q holds a line break", l, out)
			}
			if !strings.HasPrefix(s, l) {
				t.Fatalf("line %q is not next in %q", l, s)
			}
			b.WriteString(l)
			s = s[len(l):]
			switch {
			case strings.HasPrefix(s, "\r\n"):
				b.WriteString("\r\n")
				s = s[2:]
			case s != "":
				if s[0] != '\r' && s[0] != '\n' {
					t.Fatalf("line %q of %q ends before %q, not a break", l, out, s[0])
				}
				b.WriteByte(s[0])
				s = s[1:]
			}
		}
		if b.String() != string(out) || s != "" {
			t.Fatalf("lines of %q rebuild %q", out, b.String())
		}
	})
}
