package carrier_test

import (
	"os"
	"testing"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/environ"
)

func TestGetSet(t *testing.T) {
	t.Parallel()
	env := environ.Map{carrier.EnvVar: "nv.dl.rank=1,launcher.id=abc"}
	if got := carrier.Get(env); !got.Equal(attr.FromStrings("nv.dl.rank", "1", "launcher.id", "abc")) {
		t.Errorf("Get = %v", got)
	}
	text, dropped, err := carrier.Set(env, attr.NewMap(
		attr.Entry{Key: "nv.dl.rank", Value: attr.Int(2)},
		attr.Entry{Key: "bad,key", Value: attr.Int(3)},
	))
	if err != nil || text != "nv.dl.rank=2" || len(dropped) != 1 {
		t.Errorf("Set = %q, %v, %v", text, dropped, err)
	}
	if env[carrier.EnvVar] != "nv.dl.rank=2" { // replaced, never merged
		t.Errorf("env = %v", env)
	}
	if _, _, err := carrier.Set(env, nil); err != nil || env[carrier.EnvVar] != "" {
		t.Errorf("Set(nil map) left %q, %v; want present and empty", env[carrier.EnvVar], err)
	}
	if _, ok := env.LookupEnv(carrier.EnvVar); !ok {
		t.Errorf("Set(nil map) removed the variable")
	}
	if got := carrier.Get(environ.Map{}); got == nil || got.Len() != 0 {
		t.Errorf("Get on an environment without the variable = %v", got)
	}
}

// TestGetSetProcessEnv covers the nil (process) environment. Not parallel:
// it writes the process environment (restored by t.Setenv).
func TestGetSetProcessEnv(t *testing.T) {
	t.Setenv(carrier.EnvVar, "a=1")
	if got := carrier.Get(nil); !got.Equal(attr.FromStrings("a", "1")) {
		t.Errorf("Get(nil) = %v", got)
	}
	os.Setenv(carrier.EnvVar, "b=2") // read at call time, never cached
	if got := carrier.Get(environ.OS{}); !got.Equal(attr.FromStrings("b", "2")) {
		t.Errorf("Get(OSEnv) = %v", got)
	}
	if _, _, err := carrier.Set(nil, attr.FromStrings("c", "x y")); err != nil {
		t.Fatal(err)
	}
	if got := os.Getenv(carrier.EnvVar); got != "c=x%20y" {
		t.Errorf("process env after Set(nil) = %q", got)
	}
	os.Unsetenv(carrier.EnvVar)
	if got := carrier.Get(nil); got.Len() != 0 {
		t.Errorf("Get(nil) with the variable unset = %v", got)
	}
}
