package pytext_test

import (
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nemolens/lens-go/internal/pytext"
	"github.com/nemolens/lens-go/internal/testvectors"
)

// Run the fuzz target with, e.g.,
//
//	go test -run '^$' -fuzz '^FuzzParseInt$' -fuzztime 60s -parallel 1 ./internal/pytext/

// refTrim is an independent form of the docs/compatibility.md#whitespace
// trim, from the written out set of strip_test.go.
func refTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return slices.Contains(pythonSpace, r) })
}

func TestVectorsInteger(t *testing.T) {
	for _, v := range testvectors.ForOp(t, "integer") {
		t.Run(v.ID, func(t *testing.T) {
			var in string
			if err := json.Unmarshal(v.Input, &in); err != nil {
				t.Fatal(err)
			}
			want, reject, err := v.ExpectedValue()
			if err != nil {
				t.Fatal(err)
			}
			got, err := pytext.ParseInt(in)
			switch {
			case reject && err == nil:
				t.Errorf("ParseInt(%q) = %d, want rejection", in, got)
			case reject && !errors.Is(err, pytext.ErrNotInteger):
				t.Errorf("ParseInt(%q) error %v does not wrap ErrNotInteger", in, err)
			case !reject && (err != nil || got != want.AsInt64()):
				t.Errorf("ParseInt(%q) = %d, %v; want %d", in, got, err, want.AsInt64())
			}
		})
	}
}

var intRule = regexp.MustCompile(`^[+-]?[0-9]+$`)

// FuzzParseInt: ParseInt accepts exactly the texts that match the rule's
// regular expression after refTrim, within int64.
func FuzzParseInt(f *testing.F) {
	for _, tt := range parseIntTests {
		f.Add(tt.in)
	}
	for _, tt := range trimTests {
		f.Add(tt.in + "1" + tt.in)
	}
	vs, err := testvectors.ByOp("integer")
	if err != nil {
		f.Fatal(err)
	}
	for _, v := range vs {
		var s string
		if err := json.Unmarshal(v.Input, &s); err != nil {
			f.Fatal(err)
		}
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := pytext.ParseInt(s)
		var (
			want   int64
			accept bool
		)
		if trimmed := refTrim(s); intRule.MatchString(trimmed) {
			n, rangeErr := strconv.ParseInt(trimmed, 10, 64)
			want, accept = n, rangeErr == nil
		}
		switch {
		case accept && (err != nil || got != want):
			t.Fatalf("ParseInt(%q) = %d, %v; reference %d", s, got, err, want)
		case !accept && !errors.Is(err, pytext.ErrNotInteger):
			t.Fatalf("ParseInt(%q) = %d, %v; reference rejects it", s, got, err)
		}
	})
}
