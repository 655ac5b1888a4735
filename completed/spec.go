package completed

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// SpecError is a --span value that does not parse.
type SpecError struct {
	// Spec is the value as given.
	Spec string
	// Err wraps ErrMalformed, ErrNotFinite or ErrTimeRange.
	Err error
}

func (e *SpecError) Error() string { return fmt.Sprintf("--span %q: %v", e.Spec, e.Err) }

func (e *SpecError) Unwrap() error { return e.Err }

// ParseSpec parses NAME,START_EPOCH_SECONDS,END_EPOCH_SECONDS[,PARENT_NAME]
// (docs/tracing.md#span-grammar): three or four comma-separated fields, the
// name and the parent taken as they are (a name cannot hold a comma; an
// empty parent field is malformed, an empty name is left to Validate), the
// times decimal numbers of seconds since the Unix epoch, with an optional
// fraction and exponent of at most three digits (1700000000,
// 1700000000.25, 1.7e9), kept to the
// nanosecond (further digits are dropped: the time is rounded down). inf,
// nan and numbers too large for a float64 are not finite; a time before
// the epoch or after 2262-04-11 is out of range. The error is a
// *SpecError.
func ParseSpec(spec string) (Span, error) {
	fields := strings.Split(spec, ",")
	if len(fields) != 3 && len(fields) != 4 {
		return Span{}, &SpecError{spec, fmt.Errorf("%w: %d fields, want NAME,START,END[,PARENT]", ErrMalformed, len(fields))}
	}
	s := Span{Name: fields[0]}
	if len(fields) == 4 {
		if fields[3] == "" {
			return Span{}, &SpecError{spec, fmt.Errorf("%w: empty parent name (leave out the fourth field for a root span)", ErrMalformed)}
		}
		s.Parent = fields[3]
	}
	var errs []error
	var err error
	if s.Start, err = ParseEpochSeconds(fields[1]); err != nil {
		errs = append(errs, fmt.Errorf("start: %w", err))
	}
	if s.End, err = ParseEpochSeconds(fields[2]); err != nil {
		errs = append(errs, fmt.Errorf("end: %w", err))
	}
	if len(errs) > 0 {
		return Span{}, &SpecError{spec, errors.Join(errs...)}
	}
	return s, nil
}

// ParseSpecs parses every spec (see ParseSpec) and returns the spans, or
// every parse error joined. It does not Validate the set.
func ParseSpecs(specs []string) ([]Span, error) {
	spans := make([]Span, 0, len(specs))
	var errs []error
	for _, spec := range specs {
		s, err := ParseSpec(spec)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		spans = append(spans, s)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return spans, nil
}

// ParseSet parses every spec and validates the spans as one set, as lens
// emit-spans does, and returns the spans or every problem joined: the
// *SpecError of each value that does not parse, then the *SpanError of the
// set rules among the values that do, their Index the position among specs.
// A parent that names a value that did not parse is not reported missing:
// that value's own error says what is wrong.
func ParseSet(specs []string) ([]Span, error) {
	spans := make([]Span, 0, len(specs))
	var pos []int
	var errs []error
	unparsed := map[string]bool{}
	for i, spec := range specs {
		s, err := ParseSpec(spec)
		if err != nil {
			errs = append(errs, err)
			name, _, _ := strings.Cut(spec, ",")
			unparsed[name] = true
			continue
		}
		spans = append(spans, s)
		pos = append(pos, i)
	}
	for _, err := range validate(spans, func(i int) int { return pos[i] }) {
		var se *SpanError
		if errors.As(err, &se) && errors.Is(se.Err, ErrMissingParent) && unparsed[spans[slices.Index(pos, se.Index)].Parent] {
			continue
		}
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return spans, nil
}

// decimalNumber is the accepted number syntax: no sign but an optional
// '+', no blanks, no underscores, no hexadecimal, no fraction of the form
// a/b (which big.Rat would accept), an exponent of at most three digits
// (which bounds big.Rat's work).
var decimalNumber = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]{1,3})?$`)

// ParseEpochSeconds parses a time in seconds since the Unix epoch (see
// ParseSpec). The error wraps ErrMalformed, ErrNotFinite or ErrTimeRange.
func ParseEpochSeconds(v string) (time.Time, error) {
	f, ferr := strconv.ParseFloat(v, 64)
	if ferr == nil && (math.IsInf(f, 0) || math.IsNaN(f)) || // inf, nan, infinity in any case
		ferr != nil && errors.Is(ferr, strconv.ErrRange) && math.IsInf(f, 0) { // 1e400
		return time.Time{}, fmt.Errorf("%w: %q", ErrNotFinite, v)
	}
	if !decimalNumber.MatchString(v) {
		return time.Time{}, fmt.Errorf("%w: %q is not a decimal number of seconds", ErrMalformed, v)
	}
	if f < 0 || f > math.MaxInt64/1e9 {
		return time.Time{}, fmt.Errorf("%w: %q%s", ErrTimeRange, v, rangeHint(f))
	}
	// Exact to the nanosecond: the float64 above only bounds the value; the
	// exponent has at most three digits, so big.Rat's work is small.
	r, ok := new(big.Rat).SetString(v)
	if !ok {
		return time.Time{}, fmt.Errorf("%w: %q is not a decimal number of seconds", ErrMalformed, v)
	}
	ns := new(big.Int).Mul(r.Num(), big.NewInt(1e9))
	ns.Div(ns, r.Denom()) // Euclidean: rounds down for the non-negative values left
	if !ns.IsInt64() {
		return time.Time{}, fmt.Errorf("%w: %q%s", ErrTimeRange, v, rangeHint(f))
	}
	return time.Unix(0, ns.Int64()), nil
}

// rangeHint says what a time out of range should be, and which unit it
// seems to be in when it is a plausible time (2001 to 2262) in
// milliseconds, microseconds or nanoseconds.
func rangeHint(f float64) string {
	const want = " (want seconds since the Unix epoch, 0 to 9223372036, with an optional fraction: 1700000000.25)"
	if f < 0 {
		return want
	}
	for _, u := range []struct {
		div  float64
		name string
	}{{1e3, "milliseconds"}, {1e6, "microseconds"}, {1e9, "nanoseconds"}} {
		if s := f / u.div; s >= 1e9 && s <= math.MaxInt64/1e9 {
			return fmt.Sprintf("%s; it looks like %s: %s seconds", want, u.name, strconv.FormatFloat(s, 'f', -1, 64))
		}
	}
	return want
}
