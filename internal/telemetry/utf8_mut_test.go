package telemetry

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"syscall"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
)

// Tests of the UTF-8 rules and of the TLS error classification that the
// mutation check of internal/telemetry found unpinned
// (docs/testing.md#mutation-survivors); each comment names the one-line
// change that makes it fail.

// TestValidKeyValuesRules: every attribute of a list is checked (an
// invalid one after a valid one is fixed and reported), the fast check
// looks inside slices, and an attribute set is fixed too. Breaks: utf8.go
// ValidKeyValues' `continue` as `break`; isValid's `v.Type() ==
// attribute.STRING` as `!=` (a slice of strings taken as valid);
// ValidSet's `s.Len() == 0` as `!=` (a set returned as it is).
func TestValidKeyValuesRules(t *testing.T) {
	t.Parallel()
	kvs := []attribute.KeyValue{attribute.String("ok", "fine"), attribute.String("bad", "a\xffb")}
	var reported []string
	got, changed := ValidKeyValues(kvs, func(k string) { reported = append(reported, k) })
	if !changed || got[1].Value.AsString() != "a\uFFFDb" || !slices.Equal(reported, []string{"bad"}) {
		t.Errorf("ValidKeyValues = %v, %v, reported %q; want the second fixed and reported", got, changed, reported)
	}
	if kvs[1].Value.AsString() != "a\xffb" {
		t.Error("ValidKeyValues modified its input")
	}
	slice := []attribute.KeyValue{attribute.StringSlice("s", []string{"ok", "\xff"})}
	if validKeyValues(slice) {
		t.Error("validKeyValues took a slice holding invalid UTF-8 for valid")
	}
	if !validKeyValues([]attribute.KeyValue{attribute.StringSlice("s", []string{"ok"}), attribute.String("k", "v")}) {
		t.Error("validKeyValues refused valid attributes")
	}
	set := attribute.NewSet(attribute.String("k", "\xff"))
	fixed, changed := ValidSet(set, nil)
	if v, _ := fixed.Value("k"); !changed || v.AsString() != "\uFFFD" {
		t.Errorf("ValidSet = %v, %v; want k fixed", fixed.ToSlice(), changed)
	}
}

// TestValidScopeReportsAnyChange: a scope whose name alone is invalid is
// changed. Break: ValidScope's `changed || c` as `&&`.
func TestValidScopeReportsAnyChange(t *testing.T) {
	t.Parallel()
	s := instrumentation.Scope{Name: "lib\xff"}
	if !ValidScope(&s, func(string, string) {}) || s.Name != "lib\uFFFD" {
		t.Errorf("ValidScope of an invalid name: %q, want changed", s.Name)
	}
}

// TestReportTexts: the report of an invalid string names its source only
// when it is known, and AttributeName quotes a key that is empty or that
// holds a blank or a backquote. Breaks: InvalidUTF8Message's `source !=
// ""` as `==`; AttributeName's first `&&` as `||` (an empty key shown as
// nothing), its second `&&` as `||` (a key with a blank shown bare).
func TestReportTexts(t *testing.T) {
	t.Parallel()
	const tail = " is not valid UTF-8: exported with U+FFFD in place of each invalid byte sequence (the value is not shown)"
	for _, tc := range []struct{ what, source, want string }{
		{"span name", "", "span name" + tail},
		{"resource attribute host.name", "OTEL_RESOURCE_ATTRIBUTES", "resource attribute host.name (from OTEL_RESOURCE_ATTRIBUTES)" + tail},
	} {
		if got := InvalidUTF8Message(tc.what, tc.source); got != tc.want {
			t.Errorf("InvalidUTF8Message(%q, %q) = %q, want %q", tc.what, tc.source, got, tc.want)
		}
	}
	for key, want := range map[string]string{
		"host.name": "host.name",
		"":          `""`,
		"a b":       `"a b"`,
		"a`b":       "\"a`b\"",
		"a\nb":      `"a\nb"`,
	} {
		if got := AttributeName(key); got != want {
			t.Errorf("AttributeName(%q) = %s, want %s", key, got, want)
		}
	}
}

// TestTLSProblemKinds: each kind of handshake error that retrying does not
// cure is one, whichever it is; a timeout, a reset or a closed connection
// is not. Breaks: tlsProblem's chain of `||` with any one as `&&`.
func TestTLSProblemKinds(t *testing.T) {
	t.Parallel()
	wrap := func(err error) error { return fmt.Errorf("handshake: %w", err) }
	for name, tc := range map[string]struct {
		err  error
		want bool
	}{
		"verification": {wrap(&tls.CertificateVerificationError{Err: errors.New("x")}), true},
		"unknown CA":   {wrap(x509.UnknownAuthorityError{}), true},
		"hostname":     {wrap(x509.HostnameError{Certificate: &x509.Certificate{}, Host: "h"}), true},
		"invalid":      {wrap(x509.CertificateInvalidError{Cert: &x509.Certificate{}}), true},
		"not TLS":      {wrap(tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}), true},
		"alert":        {wrap(tls.AlertError(42)), true},
		"remote alert": {errors.New("remote error: tls: bad certificate"), true},
		"no ALPN":      {errors.New("credentials: cannot check peer: missing selected ALPN property"), true},
		"EOF":          {wrap(io.EOF), false},
		"reset":        {wrap(syscall.ECONNRESET), false},
		"other":        {errors.New(strings.Repeat("x", 10)), false},
	} {
		if got := tlsProblem(tc.err); got != tc.want {
			t.Errorf("%s: tlsProblem(%v) = %v, want %v", name, tc.err, got, tc.want)
		}
	}
}
