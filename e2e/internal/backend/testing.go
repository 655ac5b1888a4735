package backend

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nemolens/lens-go/internal/testvectors"
)

// ErrNoBinary is returned by BinaryPath when the binary is not there.
var ErrNoBinary = errors.New("no backend binary")

// BinaryPath finds a backend binary: $envName if set (a relative path is
// tried against the working directory, then the repository root), otherwise
// <repo>/.bin/<name>, where scripts/build-backends.sh puts it. explicit
// reports whether envName was set. The error wraps ErrNoBinary.
func BinaryPath(envName, name string) (path string, explicit bool, err error) {
	root, rootErr := testvectors.RepoRoot()
	if p := os.Getenv(envName); p != "" {
		candidates := []string{p}
		if !filepath.IsAbs(p) && rootErr == nil {
			candidates = append(candidates, filepath.Join(root, p))
		}
		for _, c := range candidates {
			if fi, err := os.Stat(c); err == nil && !fi.IsDir() {
				abs, err := filepath.Abs(c)
				return abs, true, err
			}
		}
		return "", true, fmt.Errorf("%w: %s=%q does not name a file", ErrNoBinary, envName, p)
	}
	if rootErr != nil {
		return "", false, fmt.Errorf("%w: %s unset and %v", ErrNoBinary, envName, rootErr)
	}
	p := filepath.Join(root, ".bin", name)
	if fi, err := os.Stat(p); err != nil || fi.IsDir() {
		return "", false, fmt.Errorf("%w: %s unset and %s does not exist", ErrNoBinary, envName, p)
	}
	return p, false, nil
}

// StartForTest finds the binary (BinaryPath(envName, name)), completes spec
// with it and t.TempDir() as work directory, starts it and stops it in
// t.Cleanup; a failed Stop fails the test, and a failed test logs the tail of
// the backend's log. Without a binary the test is skipped with hint, except
// when CI=true or envName was set: then it fails.
func StartForTest(t testing.TB, envName, name, hint string, spec Spec) *Proc {
	t.Helper()
	bin, explicit, err := BinaryPath(envName, name)
	if err != nil {
		if explicit || os.Getenv("CI") == "true" {
			t.Fatalf("%v; %s", err, hint)
		}
		t.Skipf("skipping: %v; %s", err, hint)
	}
	spec.Bin, spec.Name = bin, name
	if spec.WorkDir == "" {
		spec.WorkDir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), ReadyTimeout+5*time.Second)
	defer cancel()
	began := time.Now()
	p, err := Start(ctx, spec)
	if err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	t.Logf("%s pid %d ready in %v on ports %v", name, p.PID(), time.Since(began).Round(time.Millisecond), p.Ports())
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s log (tail):\n%s", name, p.LogTail(LogTailLines))
		}
		if err := p.Stop(); err != nil {
			t.Errorf("stopping %s: %v", name, err)
		}
	})
	return p
}
