package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/environ"
)

// argStackLimit is how many bytes of argument and environment strings
// (with their NULs and pointers) execve(2) accepts for a child of this
// process: a quarter of the stack limit, at most 6 MiB (3/4 of _STK_LIM),
// at least ARG_MAX (128 KiB) — Linux's bprm_stack_limits in fs/exec.c.
func argStackLimit(t *testing.T) int {
	t.Helper()
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_STACK, &rl); err != nil {
		t.Fatal(err)
	}
	limit := uint64(6 << 20)
	if q := rl.Cur / 4; q < limit {
		limit = q
	}
	return int(max(limit, 128<<10))
}

// execSize is what argv and envp take of that limit.
func execSize(argv, envv []string) int {
	n := 8 * (len(argv) + len(envv))
	for _, s := range append(argv, envv...) {
		n += len(s) + 1
	}
	return n
}

// startsWith reports the error of starting argv[0] with envv
// (os.StartProcess is execve(2)); nil when it started (and then exited).
func startsWith(argv, envv []string) error {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	p, err := os.StartProcess(argv[0], argv, &os.ProcAttr{Env: envv, Files: []*os.File{null, null, null}})
	if err != nil {
		return err
	}
	_, err = p.Wait()
	return err
}

// TestExecE2BIG: when the command cannot start because its environment is
// too large (execve fails with E2BIG: the composed carrier, though within
// the 128 KiB of one string, pushes the whole environment over the
// kernel's limit), lens exec starts it again with the carrier lens
// inherited, or with none when it inherited none; the command runs, and
// lens says once which it got. The environment is filled to 64 KiB under
// the limit, the --attr value takes 120,000 bytes; the test first checks,
// with execve itself, that the composed carrier does not fit and the
// inherited one does.
func TestExecE2BIG(t *testing.T) {
	t.Parallel()
	limit := argStackLimit(t)
	bigValue := strings.Repeat("x", 120000)
	for _, tc := range []struct {
		name      string
		inherited string // "" for none
		want      string // the child's carrier message on stderr
	}{
		{"inherited carrier", "a=1", "it got the inherited carrier"},
		{"no inherited carrier", "", "it got no carrier"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := environ.Map{helperEnvName: "env", "PATH": os.Getenv("PATH"), "NEMO_LENS_RUN_ID": "run1"}
			if tc.inherited != "" {
				env[carrier.EnvVar] = tc.inherited
			}
			argv := []string{self(t)}
			// Fill up to 64 KiB under the limit with strings of 100,000
			// bytes (each within the per-string limit).
			target := limit - 64<<10
			for i := 0; execSize(argv, environ.List(env)) < target; i++ {
				room := target - execSize(argv, environ.List(env)) - 8 - 1
				name := fmt.Sprintf("LENS_TEST_FILL_%d", i)
				env[name] = strings.Repeat("f", max(0, min(100000, room-len(name)-1)))
			}
			list := environ.List(env)
			without := list
			if tc.inherited != "" {
				without = nil
				for _, kv := range list {
					if !strings.HasPrefix(kv, carrier.EnvVar+"=") {
						without = append(without, kv)
					}
				}
			}
			composed := carrier.EnvVar + "=" + tc.inherited + ",big=" + bigValue
			if err := startsWith(argv, append(without, composed)); !errors.Is(err, syscall.E2BIG) {
				t.Fatalf("execve with the composed carrier (%d of %d bytes): %v, want E2BIG", execSize(argv, append(without, composed)), limit, err)
			}
			if err := startsWith(argv, append(list, "LENS_TEST_MARGIN="+strings.Repeat("m", 1000))); err != nil {
				t.Fatalf("execve with the inherited carrier (%d of %d bytes): %v", execSize(argv, list), limit, err)
			}

			r := runIn(t, env, "", "exec", "--attr", "big="+bigValue, "--", self(t))
			if r.code != 0 {
				t.Fatalf("lens exec: exit %d, stderr %q", r.code, r.stderr)
			}
			got, ok := childEnviron(t, r.stdout)[carrier.EnvVar]
			if got != tc.inherited || ok != (tc.inherited != "") {
				t.Errorf("child carrier %.40q (set %v), want %q", got, ok, tc.inherited)
			}
			want := "lens exec: the environment was too large for the command (E2BIG); " + tc.want + "\n"
			if r.stderr != want {
				t.Errorf("stderr %q, want %q", r.stderr, want)
			}
		})
	}
}
