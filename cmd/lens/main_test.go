package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nemolens/lens-go/environ"
)

// helperEnv switches the test binary into a helper child for lens exec
// tests: the command lens exec runs is this binary itself.
const helperEnvName = "LENS_TEST_HELPER"

// lensBin is the lens binary built once by TestMain, in testDir.
var lensBin, testDir string

func TestMain(m *testing.M) {
	if isGPUProbe(os.Args) {
		// lens exec run in-process starts this binary as its GPU probe.
		os.Exit(gpuProbeMain(os.Args, environ.OS{}, os.Stdout))
	}
	if mode, ok := os.LookupEnv(helperEnvName); ok {
		os.Exit(helper(mode))
	}
	dir, err := os.MkdirTemp("", "lens-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testDir = dir
	lensBin = filepath.Join(dir, "lens")
	build := exec.Command("go", "build", "-o", lensBin, ".")
	if other := os.Getenv("LENS_TEST_BINARY"); other != "" {
		// Run the suite against another lens binary (an older build, to see
		// a test fail without its fix).
		build = exec.Command("cp", other, lensBin)
	}
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building lens:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// helper is the child process of lens exec tests. Modes:
//
//	args     print the arguments as a JSON array
//	env      print the environment as a JSON array (os.Environ order)
//	exit=N   exit with status N
//	signal   print "ready", wait for SIGINT or SIGTERM, print its name;
//	         then exit 7 for SIGINT, or die by SIGTERM
//	kill     kill itself with SIGKILL
//	burn=C,M spend C ms of CPU time and hold M MiB, print its own usage (see burn)
func helper(mode string) int {
	switch {
	case mode == "args":
		out, _ := json.Marshal(os.Args[1:])
		fmt.Println(string(out))
	case mode == "env":
		out, _ := json.Marshal(os.Environ())
		fmt.Println(string(out))
	case strings.HasPrefix(mode, "exit="):
		n, _ := strconv.Atoi(strings.TrimPrefix(mode, "exit="))
		return n
	case mode == "signal":
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
		fmt.Println("ready")
		select {
		case sig := <-c:
			fmt.Println("got", sig)
			if sig == syscall.SIGINT {
				return 7
			}
			signal.Reset(syscall.SIGTERM)
			_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
			time.Sleep(10 * time.Second)
			return 99
		case <-time.After(30 * time.Second):
			fmt.Println("no signal")
			return 98
		}
	case strings.HasPrefix(mode, "burn="):
		return burn(strings.TrimPrefix(mode, "burn="))
	case mode == "kill":
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(10 * time.Second)
		return 99
	default:
		fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
		return 97
	}
	return 0
}

// result is the outcome of one lens invocation.
type result struct {
	stdout, stderr string
	code           int
}

// shellStatus is the status of a finished command as a shell reports it:
// its exit status, or 128+N when signal N ended it (lens exec ends by the
// signal that killed its command); err when the command did not run.
func shellStatus(err error) (int, error) {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return 0, err
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return ee.ExitCode(), nil
}

// cliEnv is the environment of a lens binary run: PATH only, plus env
// (env -i semantics).
func cliEnv(env map[string]string) []string {
	out := []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// runBin runs the built binary with exactly the environment cliEnv(env).
func runBin(t *testing.T, env map[string]string, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(lensBin, args...)
	cmd.Env = cliEnv(env)
	cmd.Dir = t.TempDir()
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code, err := shellStatus(cmd.Run())
	if err != nil {
		t.Fatalf("running lens %q: %v", args, err)
	}
	return result{stdout.String(), stderr.String(), code}
}

// runIn runs the command in-process with an in-memory environment.
func runIn(t *testing.T, env environ.Map, stdin string, args ...string) result {
	t.Helper()
	if env == nil {
		env = environ.Map{}
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &stdout, &stderr, env)
	return result{stdout.String(), stderr.String(), code}
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout: %q\nstderr: %q", r.code, r.stdout, r.stderr)
}
