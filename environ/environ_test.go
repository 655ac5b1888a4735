package environ_test

import (
	"slices"
	"testing"

	"github.com/nemolens/lens-go/environ"
)

func TestMapEnv(t *testing.T) {
	t.Parallel()
	var nilEnv environ.Map
	if v, ok := nilEnv.LookupEnv("A"); ok || v != "" {
		t.Errorf("nil MapEnv LookupEnv = %q, %v", v, ok)
	}
	if got := nilEnv.Environ(); len(got) != 0 {
		t.Errorf("nil MapEnv Environ = %v", got)
	}
	env := environ.Map{}
	if err := env.Setenv("B", ""); err != nil {
		t.Fatal(err)
	}
	if err := env.Setenv("A", "x=y"); err != nil {
		t.Fatal(err)
	}
	if v, ok := env.LookupEnv("B"); !ok || v != "" {
		t.Errorf("present-but-empty B = %q, %v", v, ok)
	}
	if got := env.Environ(); !slices.Equal(got, []string{"A=x=y", "B="}) {
		t.Errorf("Environ = %q", got)
	}
	if err := env.Unsetenv("B"); err != nil {
		t.Fatal(err)
	}
	if _, ok := env.LookupEnv("B"); ok {
		t.Errorf("B still present after Unsetenv")
	}
	if err := env.Unsetenv("never"); err != nil {
		t.Errorf("Unsetenv of an absent key: %v", err)
	}
}

func TestEnvFromList(t *testing.T) {
	t.Parallel()
	env := environ.FromList([]string{"A=1", "noequals", "B=", "A=2", "C==x", "=hidden"})
	want := environ.Map{"A": "2", "B": "", "C": "=x", "": "hidden"}
	if len(env) != len(want) {
		t.Fatalf("EnvFromList = %v, want %v", env, want)
	}
	for k, v := range want {
		if got, ok := env[k]; !ok || got != v {
			t.Errorf("%q = %q, %v; want %q", k, got, ok, v)
		}
	}
	if got := environ.FromList(nil); got == nil || len(got) != 0 {
		t.Errorf("EnvFromList(nil) = %#v, want an empty writable MapEnv", got)
	}
}
