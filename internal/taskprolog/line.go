package taskprolog

import (
	"errors"
	"fmt"
	"strings"
)

// Why a value cannot be exported through the TaskProlog syntax.
var (
	// ErrNewline: slurmstepd ends a value at the first newline, so a value
	// holding one would arrive cut short (docs/taskprolog.md#output-syntax).
	ErrNewline = errors.New("the value holds a newline, which ends a TaskProlog line")
	// ErrNUL: slurmstepd reads the TaskProlog's output as a C string, so a
	// NUL would end the whole output there; no environment variable can
	// hold one either.
	ErrNUL = errors.New("the value holds a NUL byte, which no environment variable can hold")
	// ErrName: the name is not an environment variable name slurmstepd
	// reads back unchanged ([A-Za-z_][A-Za-z0-9_]*).
	ErrName = errors.New("not a variable name of the form [A-Za-z_][A-Za-z0-9_]*")
)

// ValueError is a variable the TaskProlog leaves out, and why
// (errors.Is with ErrNewline, ErrNUL or ErrName).
type ValueError struct {
	Name string
	Err  error
}

func (e *ValueError) Error() string { return fmt.Sprintf("%s not set: %v", e.Name, e.Err) }

func (e *ValueError) Unwrap() error { return e.Err }

// ValidName reports whether name is [A-Za-z_][A-Za-z0-9_]*.
func ValidName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_', 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// Export returns the line "export NAME=VALUE\n" after which slurmstepd sets
// NAME to exactly VALUE: it takes everything after the first '=' up to the
// end of the line, with no quote removal and no escapes
// (docs/taskprolog.md#output-syntax). A value that cannot survive that
// syntax — one with a newline or a NUL — is never cut short: Export returns
// a *ValueError instead, and the caller leaves the variable out.
func Export(name, value string) (string, error) {
	switch {
	case !ValidName(name):
		return "", &ValueError{Name: name, Err: ErrName}
	case strings.IndexByte(value, '\n') >= 0:
		return "", &ValueError{Name: name, Err: ErrNewline}
	case strings.IndexByte(value, 0) >= 0:
		return "", &ValueError{Name: name, Err: ErrNUL}
	}
	return "export " + name + "=" + value + "\n", nil
}
