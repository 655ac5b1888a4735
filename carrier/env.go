package carrier

import (
	"os"
	"slices"
	"strings"

	"github.com/nemolens/lens-go/attr"
)

// Lookuper reads environment variables, reporting presence as os.LookupEnv
// does: absent and present-but-empty are different.
type Lookuper interface {
	LookupEnv(key string) (value string, ok bool)
}

// Env is an environment that can also be written. [OSEnv] is the process
// environment; [MapEnv] is an in-memory one for tests and for building child
// environments.
type Env interface {
	Lookuper
	Setenv(key, value string) error
	Unsetenv(key string) error
}

// OSEnv is the live process environment (os.LookupEnv, os.Setenv,
// os.Unsetenv). It is the default wherever an Env or Lookuper is nil.
type OSEnv struct{}

// LookupEnv implements [Lookuper].
func (OSEnv) LookupEnv(key string) (string, bool) { return os.LookupEnv(key) }

// Setenv implements [Env].
func (OSEnv) Setenv(key, value string) error { return os.Setenv(key, value) }

// Unsetenv implements [Env].
func (OSEnv) Unsetenv(key string) error { return os.Unsetenv(key) }

// MapEnv is an in-memory environment. A nil MapEnv reads as empty; writing
// to it panics, like writing to a nil map.
type MapEnv map[string]string

// LookupEnv implements [Lookuper].
func (m MapEnv) LookupEnv(key string) (string, bool) {
	v, ok := m[key]
	return v, ok
}

// Setenv implements [Env].
func (m MapEnv) Setenv(key, value string) error {
	m[key] = value
	return nil
}

// Unsetenv implements [Env].
func (m MapEnv) Unsetenv(key string) error {
	delete(m, key)
	return nil
}

// Environ returns the variables as sorted "KEY=value" strings, the form of
// os.Environ and exec.Cmd.Env.
func (m MapEnv) Environ() []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// EnvFromList builds a MapEnv from "KEY=value" strings such as os.Environ().
// As in os/exec, a later duplicate wins; entries without '=' are ignored.
func EnvFromList(environ []string) MapEnv {
	m := make(MapEnv, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

func orOS(l Lookuper) Lookuper {
	if l == nil {
		return OSEnv{}
	}
	return l
}

func orOSEnv(e Env) Env {
	if e == nil {
		return OSEnv{}
	}
	return e
}

// Get parses the carrier of env (nil: the process environment), read at call
// time. An absent variable gives an empty map. Values are strings; no type
// reconstruction happens here.
func Get(env Lookuper) *attr.Map {
	v, _ := orOS(env).LookupEnv(EnvVar)
	return Parse(v)
}
