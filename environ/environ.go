package environ

import (
	"os"
	"slices"
	"strings"
)

// Lookuper reads environment variables, reporting presence as os.LookupEnv
// does: absent and present-but-empty are different.
type Lookuper interface {
	LookupEnv(key string) (value string, ok bool)
}

// Env is an environment that can also be written. [OS] is the process
// environment; [Map] is an in-memory one.
type Env interface {
	Lookuper
	Setenv(key, value string) error
	Unsetenv(key string) error
}

// OS is the live process environment (os.LookupEnv, os.Setenv,
// os.Unsetenv). It is what a nil [Lookuper] or [Env] means everywhere in
// lens-go.
type OS struct{}

// LookupEnv implements [Lookuper].
func (OS) LookupEnv(key string) (string, bool) { return os.LookupEnv(key) }

// Setenv implements [Env].
func (OS) Setenv(key, value string) error { return os.Setenv(key, value) }

// Unsetenv implements [Env].
func (OS) Unsetenv(key string) error { return os.Unsetenv(key) }

// Environ returns os.Environ().
func (OS) Environ() []string { return os.Environ() }

// Map is an in-memory environment. A nil Map reads as empty; writing to it
// panics, like writing to a nil map.
type Map map[string]string

// LookupEnv implements [Lookuper].
func (m Map) LookupEnv(key string) (string, bool) {
	v, ok := m[key]
	return v, ok
}

// Setenv implements [Env].
func (m Map) Setenv(key, value string) error {
	m[key] = value
	return nil
}

// Unsetenv implements [Env].
func (m Map) Unsetenv(key string) error {
	delete(m, key)
	return nil
}

// Environ returns the variables as sorted "KEY=value" strings, the form of
// os.Environ and exec.Cmd.Env.
func (m Map) Environ() []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// FromList builds a Map from "KEY=value" strings such as os.Environ(). As
// in os/exec, a later duplicate wins; entries without '=' are ignored. The
// result is never nil.
func FromList(list []string) Map {
	m := make(Map, len(list))
	for _, kv := range list {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// Environer is implemented by environments that can list themselves as
// "KEY=value" strings ([OS], [Map]).
type Environer interface {
	Environ() []string
}

// List returns the "KEY=value" strings of l: l.Environ() when l is an
// [Environer], os.Environ() when l is nil, and nil otherwise (a Lookuper
// that cannot list itself).
func List(l Lookuper) []string {
	switch e := l.(type) {
	case nil:
		return os.Environ()
	case Environer:
		return e.Environ()
	}
	return nil
}

// Or returns l, or [OS] when l is nil.
func Or(l Lookuper) Lookuper {
	if l == nil {
		return OS{}
	}
	return l
}

// OrEnv returns e, or [OS] when e is nil.
func OrEnv(e Env) Env {
	if e == nil {
		return OS{}
	}
	return e
}

// NonEmpty returns the value of name and true when it is present and not
// empty. Whitespace counts as a value: nothing is trimmed.
func NonEmpty(l Lookuper, name string) (string, bool) {
	v, ok := l.LookupEnv(name)
	return v, ok && v != ""
}

// NonEmptyOr returns the value of name when it is present and not empty,
// else def.
func NonEmptyOr(l Lookuper, name, def string) string {
	if v, ok := NonEmpty(l, name); ok {
		return v
	}
	return def
}

// Last returns the value of the last "name=..." entry of list (os/exec uses
// the last duplicate) and whether there is one.
func Last(list []string, name string) (string, bool) {
	for i := len(list) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(list[i], name); ok && strings.HasPrefix(v, "=") {
			return v[1:], true
		}
	}
	return "", false
}
