package jaeger

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

// BinEnv names the environment variable holding the Jaeger binary's path.
const BinEnv = "JAEGER_BIN"

// BuildHint tells how to get the binary.
const BuildHint = "build it with scripts/build-jaeger.sh (several minutes and ~3 GB of " +
	"module/build cache when cold, seconds when warm), or set " + BinEnv + " to a Jaeger v2 binary"

// ErrNoBinary is returned by BinaryPath when neither $JAEGER_BIN nor
// <repo>/.bin/jaeger exists.
var ErrNoBinary = errors.New("jaeger: no Jaeger binary")

// BinaryPath finds the Jaeger binary: $JAEGER_BIN if set (a relative path is
// tried against the working directory, then the repository root), otherwise
// <repo>/.bin/jaeger, where scripts/build-jaeger.sh puts it. explicit reports
// whether JAEGER_BIN was set. The error wraps ErrNoBinary when no binary is
// there.
func BinaryPath() (path string, explicit bool, err error) {
	root, rootErr := testvectors.RepoRoot()
	if p := os.Getenv(BinEnv); p != "" {
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
		return "", true, fmt.Errorf("%w: %s=%q does not name a file", ErrNoBinary, BinEnv, p)
	}
	if rootErr != nil {
		return "", false, fmt.Errorf("%w: %s unset and %v", ErrNoBinary, BinEnv, rootErr)
	}
	p := filepath.Join(root, ".bin", "jaeger")
	if fi, err := os.Stat(p); err != nil || fi.IsDir() {
		return "", false, fmt.Errorf("%w: %s unset and %s does not exist", ErrNoBinary, BinEnv, p)
	}
	return p, false, nil
}

// StartForTest starts Jaeger for a test, with t.TempDir() as work directory,
// and stops it in t.Cleanup. Stop errors (a crash during the test, a hung
// shutdown) fail the test, and a failed test logs the tail of Jaeger's log.
//
// Without a binary (see BinaryPath) the test is skipped with a hint on how to
// build it, except when CI=true or JAEGER_BIN was set explicitly: then it
// fails.
func StartForTest(t testing.TB) *Jaeger {
	t.Helper()
	bin, explicit, err := BinaryPath()
	if err != nil {
		if explicit || os.Getenv("CI") == "true" {
			t.Fatalf("%v; %s", err, BuildHint)
		}
		t.Skipf("skipping: %v; %s", err, BuildHint)
	}
	ctx, cancel := context.WithTimeout(context.Background(), ReadyTimeout+5*time.Second)
	defer cancel()
	began := time.Now()
	j, err := Start(ctx, bin, t.TempDir())
	if err != nil {
		t.Fatalf("starting Jaeger: %v", err)
	}
	t.Logf("jaeger pid %d ready in %v: otlp grpc %s, otlp http %s, query %s",
		j.PID(), time.Since(began).Round(time.Millisecond), j.OTLPGRPCEndpoint(), j.OTLPHTTPEndpoint(), j.QueryURL())
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("jaeger log (tail):\n%s", j.LogTail(logTailLines))
		}
		if err := j.Stop(); err != nil {
			t.Errorf("stopping Jaeger: %v", err)
		}
	})
	return j
}
