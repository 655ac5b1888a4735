package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nemolens/lens-go/detect"
	"github.com/nemolens/lens-go/environ"
)

// The release smoke suite (docs/install.md#release-checks): scripts/test.sh's
// release stage runs these tests, with the TestCLIVectors tests, against a
// release binary (LENS_TEST_BINARY: a wrapper that runs the arm64 binary
// under qemu-aarch64-static, or the amd64 binary chrooted into a directory
// that holds nothing else). The stage passes what the binary must say,
// computed from git, not from the binary:
//
//	LENS_RELEASE_PLATFORM   linux/arm64 or linux/amd64 (the tests skip without it)
//	LENS_RELEASE_VERSION    the version it must print and export
//	LENS_RELEASE_COMMIT     the commit (git rev-parse HEAD)
//	LENS_RELEASE_MODIFIED   true or false
//	LENS_RELEASE_SELF       the binary's path as it sees itself ("/lens" in the
//	                        empty root, where lens exec can run only lens);
//	                        empty: the commands lens exec runs are the host's
//	                        /bin/sh, /bin/cat and /bin/uname

type releaseWant struct {
	platform, version, commit, modified, self string
}

func releaseEnv(t *testing.T) releaseWant {
	t.Helper()
	w := releaseWant{
		platform: os.Getenv("LENS_RELEASE_PLATFORM"),
		version:  os.Getenv("LENS_RELEASE_VERSION"),
		commit:   os.Getenv("LENS_RELEASE_COMMIT"),
		modified: os.Getenv("LENS_RELEASE_MODIFIED"),
		self:     os.Getenv("LENS_RELEASE_SELF"),
	}
	if w.platform == "" {
		t.Skip("not a release smoke run: scripts/test.sh --stage release sets LENS_RELEASE_PLATFORM and LENS_TEST_BINARY")
	}
	if w.version == "" || w.commit == "" || w.modified == "" {
		t.Fatalf("LENS_RELEASE_PLATFORM is set but LENS_RELEASE_VERSION, _COMMIT or _MODIFIED is not: %+v", w)
	}
	return w
}

func TestReleaseVersion(t *testing.T) {
	t.Parallel()
	w := releaseEnv(t)
	want := fmt.Sprintf("lens %s\ncommit: %s\nmodified: %s\ngo: %s\nplatform: %s\n",
		w.version, w.commit, w.modified, runtime.Version(), w.platform)
	if r := runBin(t, nil, "", "--version"); r.code != 0 || r.stdout != want || r.stderr != "" {
		t.Errorf("lens --version: %v, want %q", r, want)
	}
}

// TestReleaseServiceVersion: service.version of the resource lens resource
// prints and of the span lens exec exports is the version --version names.
func TestReleaseServiceVersion(t *testing.T) {
	t.Parallel()
	w := releaseEnv(t)
	r := runBin(t, nil, "", "resource", "--format", "json")
	if r.code != 0 {
		t.Fatalf("lens resource: %v", r)
	}
	res, err := decodeOutput([]byte(r.stdout))
	if err != nil {
		t.Fatalf("lens resource output %q: %v", r.stdout, err)
	}
	if v, _ := res.Get("service.version"); v.AsString() != w.version {
		t.Errorf("lens resource: service.version %v, want %q", v, w.version)
	}

	command := []string{"/bin/sh", "-c", "exit 0"}
	if w.self != "" {
		command = []string{w.self, "--version"}
	}
	env := map[string]string{"NEMO_LENS_ENABLED": "true", "NEMO_LENS_EXPORTER": "console", "NEMO_LENS_RUN_ID": "smoke"}
	r = runBin(t, env, "", append([]string{"exec", "--"}, command...)...)
	if r.code != 0 {
		t.Fatalf("lens exec with the console exporter: %v", r)
	}
	spans := consoleSpans(t, r.stderr)
	if len(spans) != 1 {
		t.Fatalf("%d console spans on stderr %q, want 1", len(spans), r.stderr)
	}
	if v := spans[0].resource("service.version"); v != w.version {
		t.Errorf("exported span: service.version %v, want %q", v, w.version)
	}
}

// uuidV5URL is RFC 9562's UUIDv5 of name in the URL namespace, written here
// independently of package detect.
func uuidV5URL(name string) string {
	ns, _ := hex.DecodeString("6ba7b8119dad11d180b400c04fd430c8")
	sum := sha1.Sum(append(ns, name...))
	u := sum[:16]
	u[6] = u[6]&0x0f | 0x50
	u[8] = u[8]&0x3f | 0x80
	h := hex.EncodeToString(u)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// TestReleaseDetectSlurm: detect --explain in a Slurm-like environment (only
// PATH and SLURM_* variables) names each value and its source, and the JSON
// agrees with the library built for the host.
func TestReleaseDetectSlurm(t *testing.T) {
	t.Parallel()
	releaseEnv(t)
	env := map[string]string{
		"SLURM_JOB_ID": "4242", "SLURM_JOB_NAME": "smoke", "SLURM_CLUSTER_NAME": "grace",
		"SLURM_JOB_NUM_NODES": "2", "SLURM_NTASKS": "8", "SLURM_PROCID": "3", "SLURM_LOCALID": "1",
	}
	r := runBin(t, env, "", "detect", "--explain")
	if r.code != 0 {
		t.Fatalf("lens detect --explain: %v", r)
	}
	lines := map[string][]string{}
	for _, l := range strings.Split(r.stdout, "\n") {
		if f := strings.Fields(l); len(f) >= 2 {
			lines[f[0]] = f[1:]
		}
	}
	for key, want := range map[string]string{
		"slurm.job.id":       "4242 string env SLURM_JOB_ID",
		"slurm.job.name":     "smoke string env SLURM_JOB_NAME",
		"slurm.cluster.name": "grace string env SLURM_CLUSTER_NAME",
		"slurm.nnodes":       "2 int env SLURM_JOB_NUM_NODES",
		"slurm.ntasks":       "8 int env SLURM_NTASKS",
		"nv.dl.job.uuid":     uuidV5URL("nemo.lens.job/grace/4242") + " string derived",
	} {
		if got := strings.Join(lines[key], " "); !strings.HasPrefix(got, want) {
			t.Errorf("lens detect --explain: %s is %q, want %q…\n%s", key, got, want, r.stdout)
		}
	}
	got := detectJSON(t, env, "slurm")
	if lib := detect.Slurm(context.Background(), detect.WithEnv(environ.Map(env))); !got.Equal(lib) {
		t.Errorf("release binary %v disagrees with detect.Slurm on the host %v", got, lib)
	}
}

// TestReleaseExecStatus: lens exec exits with the command's status; under
// emulation the host's /bin/uname runs natively (qemu-user hands execve of
// a host binary to the kernel).
func TestReleaseExecStatus(t *testing.T) {
	t.Parallel()
	w := releaseEnv(t)
	command, status := []string{"/bin/sh", "-c", "exit 7"}, 7
	if w.self != "" {
		command, status = []string{w.self, "no-such-command"}, 2
	}
	if r := runBin(t, nil, "", append([]string{"exec", "--"}, command...)...); r.code != status {
		t.Errorf("lens exec -- %q: %v, want exit status %d", command, r, status)
	}
	if w.self != "" {
		r := runBin(t, nil, "", "exec", "--", w.self, "--version")
		if r.code != 0 || !strings.HasPrefix(r.stdout, "lens "+w.version+"\n") {
			t.Errorf("lens exec -- %s --version: %v", w.self, r)
		}
		return
	}
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		t.Fatal(err)
	}
	var machine []byte
	for _, c := range u.Machine {
		if c == 0 {
			break
		}
		machine = append(machine, byte(c))
	}
	if r := runBin(t, nil, "", "exec", "--", "/bin/uname", "-m"); r.code != 0 || r.stdout != string(machine)+"\n" {
		t.Errorf("lens exec -- uname -m: %v, want the host's %q", r, machine)
	}
}

// TestReleaseExecSignal: a SIGTERM to lens exec reaches the command (which
// it kills), and lens then ends itself with SIGTERM, so that its parent
// reads the same wait status. The signal is sent once the command runs:
// lens subscribes to signals before it starts the command.
func TestReleaseExecSignal(t *testing.T) {
	t.Parallel()
	w := releaseEnv(t)
	command := []string{"/bin/cat"} // reads stdin, held open, until killed
	if w.self != "" {
		command = []string{w.self, "carrier", "parse"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, lensBin, append([]string{"exec", "--"}, command...)...)
	cmd.Env = cliEnv(nil)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := waitForChild(ctx, cmd.Process.Pid, command); err != nil {
		t.Fatalf("%v (stderr %q)", err, stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("lens exec -- %q after SIGTERM: %v, want killed by SIGTERM", command, err)
	}
	if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("lens exec -- %q after SIGTERM: %v, want killed by SIGTERM (stderr %q)", command, err, stderr.String())
	}
}

// waitForChild polls /proc until a child of pid runs argv (after its exec),
// or ctx ends.
func waitForChild(ctx context.Context, pid int, argv []string) error {
	want := strings.Join(argv, "\x00") + "\x00"
	for {
		dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
		for _, stat := range dirs {
			data, err := os.ReadFile(stat)
			if err != nil {
				continue
			}
			// pid (comm) state ppid …: comm may hold spaces; ppid follows the last ')'.
			i := bytes.LastIndexByte(data, ')')
			if i < 0 {
				continue
			}
			sc := bufio.NewScanner(bytes.NewReader(data[i+1:]))
			sc.Split(bufio.ScanWords)
			var f []string
			for sc.Scan() && len(f) < 2 {
				f = append(f, sc.Text())
			}
			if len(f) < 2 || f[1] != strconv.Itoa(pid) {
				continue
			}
			if cmdline, _ := os.ReadFile(filepath.Join(filepath.Dir(stat), "cmdline")); string(cmdline) == want {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no child of lens (pid %d) ran %q: %w", pid, argv, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
