//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/faulttest"
)

// liveness is how long a test waits for something that used to block
// forever before it calls it blocked: a liveness bound, never a timing
// assertion (what works returns in milliseconds).
const liveness = time.Minute

// prologProc runs the built binary as `lens taskprolog ARGS` with exactly
// the environment env, bounded by liveness.
func prologProc(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	return liveRun(t, env, append([]string{"taskprolog"}, args...)...)
}

// liveRun runs the built binary as `lens ARGS` with exactly the
// environment env, and fails the test when it has not returned within
// liveness: the check of a bound that used to be missing, never a timing
// assertion.
func liveRun(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), liveness)
	defer cancel()
	cmd := exec.CommandContext(ctx, lensBin, args...)
	cmd.Env = cliEnv(env)
	cmd.Dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("lens %q blocked (killed after %v): stderr %q", args, liveness, stderr.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{stdout.String(), stderr.String(), code}
}

func mkfifo(t *testing.T, path string) string {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o666); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTaskPrologNotRegularFiles: a policy file (named by --policy, by
// LENS_TASKPROLOG_POLICY) or a policy's log file that is a FIFO — with
// nobody at the other end, or with one that never reads or writes — or a
// device is refused at once and reported; the task gets its exports and
// lens exits 0. On 85caa10 each FIFO case blocked forever.
func TestTaskPrologNotRegularFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	step := prologRows()[1].env
	lonely := mkfifo(t, filepath.Join(dir, "lonely.fifo"))
	held := mkfifo(t, filepath.Join(dir, "held.fifo"))
	// Each log case has FIFOs of its own: on 85caa10 a blocked open of one
	// returned when another case opened it.
	lonelyLog := mkfifo(t, filepath.Join(dir, "lonely-log.fifo"))
	heldLog := mkfifo(t, filepath.Join(dir, "held-log.fifo"))
	for _, f := range []string{held, heldLog} {
		h, err := os.OpenFile(f, os.O_RDWR, 0) // both ends open, nothing ever written or read
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() }) // the parallel subtests run after this function returns
	}
	logPolicy := func(name, log string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("syslog = off\nlog = "+log+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name   string
		env    map[string]string
		args   []string
		report string
	}{
		{"--policy FIFO without a writer", nil, []string{"--policy", lonely}, "policy " + lonely + ": open " + lonely + ": not a regular file (a FIFO)"},
		{"--policy FIFO with a silent writer", nil, []string{"--policy", held}, "not a regular file (a FIFO)"},
		{"LENS_TASKPROLOG_POLICY FIFO", map[string]string{TaskPrologPolicyEnv: lonely}, nil, "not a regular file (a FIFO)"},
		{"--policy device", nil, []string{"--policy", os.DevNull}, "not a regular file (a device)"},
		{"--policy directory", nil, []string{"--policy", dir}, "not a regular file (a directory)"},
		// A report to write (LENS_TASKPROLOG=on is not "off"), to a log
		// file that is a FIFO.
		{"log FIFO without a reader", map[string]string{TaskPrologEnv: "on"}, []string{"--policy", logPolicy("l1.conf", lonelyLog)}, "log " + lonelyLog + ": open " + lonelyLog + ": no such device or address"},
		{"log FIFO with a silent reader", map[string]string{TaskPrologEnv: "on"}, []string{"--policy", logPolicy("l2.conf", heldLog)}, "log " + heldLog + ": open " + heldLog + ": not a regular file (a FIFO)"},
		{"log device", map[string]string{TaskPrologEnv: "on"}, []string{"--policy", logPolicy("l3.conf", "/dev/null")}, "not a regular file (a device)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := maps.Clone(step)
			maps.Copy(env, c.env)
			r := prologProc(t, env, c.args...)
			got := slurmstepdApply(env, r.stdout)
			if r.code != 0 || got["NEMO_LENS_RUN_ID"] != "3" || !strings.Contains(got[carrier.EnvVar], "slurm.job.id=3") {
				t.Errorf("exit %d, exports %q; want 0 and the carrier and run id\n%v", r.code, r.stdout, r)
			}
			if !strings.Contains(r.stderr, c.report) {
				t.Errorf("stderr %q lacks %q", r.stderr, c.report)
			}
		})
	}
}

// listenSyslog listens on a unix datagram socket like /dev/log, on a path
// short enough for sun_path (108 bytes), until the test ends.
func listenSyslog(t *testing.T) (string, *net.UnixConn) {
	t.Helper()
	dir, err := os.MkdirTemp("", "lens-syslog")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "log")
	srv, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return path, srv
}

// stuckSyslog returns the path of a datagram socket like /dev/log whose
// daemon reads nothing: its queue is filled first, so that the next
// blocking write would wait forever.
func stuckSyslog(t *testing.T) string {
	t.Helper()
	path, _ := listenSyslog(t)
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		err := syscall.Sendmsg(fd, []byte("<12>filler: x"), nil, nil, syscall.MSG_DONTWAIT)
		if errors.Is(err, syscall.EAGAIN) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n == 0 {
		t.Fatal("the socket's queue took no datagram")
	}
	return path
}

// TestTaskPrologStuckSyslog: with a syslog daemon that reads nothing (a
// real unix datagram socket whose queue is full), lens taskprolog with
// reports to send still prints the exports and exits 0 — as a process and
// for the writer alone. On 85caa10 (log/syslog, no deadline) the write
// blocked forever once the queue was full.
func TestTaskPrologStuckSyslog(t *testing.T) {
	t.Parallel()
	sock := stuckSyslog(t)
	policy := filepath.Join(t.TempDir(), "p.conf")
	if err := os.WriteFile(policy, []byte("syslog = "+sock+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := maps.Clone(prologRows()[1].env)
	env[TaskPrologEnv] = "bogus" // a report to send
	r := prologProc(t, env, "--policy", policy)
	if r.code != 0 || slurmstepdApply(env, r.stdout)["NEMO_LENS_RUN_ID"] != "3" || !strings.Contains(r.stderr, `LENS_TASKPROLOG="bogus" is not "off"`) {
		t.Errorf("exit %d; want 0, the exports and the report on stderr\n%v", r.code, r)
	}
	// The writer alone: every write gives up at the deadline.
	w := dialSyslog(sock, TaskPrologName, 1, time.Now().Add(50*time.Millisecond))
	if w == nil {
		t.Fatal("dialSyslog found no socket")
	}
	defer w.Close()
	err := faulttest.NoHang(t, "a write to a full syslog queue", func() error { _, err := io.WriteString(w, "one more"); return err })
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("write to a full syslog queue: %v, want os.ErrDeadlineExceeded", err)
	}
}

// TestTaskPrologSyslogMessages: reports reach a listening syslog socket
// named by the policy, one datagram each, in log/syslog's local format
// (priority user.warning, tag lens-taskprolog[pid]); syslog = off sends
// none.
func TestTaskPrologSyslogMessages(t *testing.T) {
	t.Parallel()
	sock, srv := listenSyslog(t)
	dir := t.TempDir()
	env := maps.Clone(prologRows()[1].env)
	env[TaskPrologEnv] = "bogus"
	var stdout, stderr bytes.Buffer
	a := &app{stdout: &stdout, stderr: &stderr, env: environ.Map(env), getpid: func() int { return 77 }, prologBound: time.Minute,
		hostname: func() (string, error) { return "node-x", nil }, policyPath: filepath.Join(dir, "none")}
	policy := filepath.Join(dir, "p.conf")
	if err := os.WriteFile(policy, []byte("syslog = "+sock+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := a.main(t.Context(), []string{"taskprolog", "--policy", policy}); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	buf := make([]byte, 4096)
	if err := srv.SetReadDeadline(time.Now().Add(liveness)); err != nil {
		t.Fatal(err)
	}
	n, err := srv.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	msg := string(buf[:n])
	want := `lens-taskprolog[77]: job 3 step 0 task 1 node localhost pid 77: LENS_TASKPROLOG="bogus" is not "off"; ignored`
	if !strings.HasPrefix(msg, "<12>") || !strings.HasSuffix(msg, want) {
		t.Errorf("syslog message %q, want <12>TIMESTAMP %s", msg, want)
	}
	// syslog = off: nothing.
	if err := os.WriteFile(policy, []byte("syslog = off\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := a.main(t.Context(), []string{"taskprolog", "--policy", policy}); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if err := srv.SetReadDeadline(time.Now()); err != nil {
		t.Fatal(err)
	}
	if n, err := srv.Read(buf); err == nil {
		t.Errorf("syslog = off sent %q", buf[:n])
	}
}

// TestTaskPrologWatchdog: whatever blocks inside (here the host name probe,
// forever), lens taskprolog gives up computing after 60 % of its bound
// (0.6 s of the default 1 s), exports nothing, says where it gave up, and
// exits 0. On 85caa10 it blocked as long as the probe. The compute bound's
// timer is the test's (app.prologAfter): it fires once the probe blocks,
// so the place named does not depend on how fast the machine got there;
// the bound of a minute leaves the reports time to be written.
func TestTaskPrologWatchdog(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		bound, compute time.Duration
		report         string // "": not read (the default bound may end before the reports are written)
	}{
		{time.Minute, 36 * time.Second, "gave up after 36s while computing the exports; nothing exported"},
		{0, 600 * time.Millisecond, ""}, // TaskPrologBound: 0.6 s of 1 s
	} {
		release, blocked, fire := make(chan struct{}), make(chan struct{}), make(chan time.Time)
		asked := make(chan time.Duration, 1)
		var stdout, stderr bytes.Buffer
		a := &app{stdout: &stdout, stderr: &stderr, env: environ.Map(prologRows()[1].env),
			hostname:    func() (string, error) { close(blocked); <-release; return "late", nil },
			policyPath:  "/nonexistent-lens-test-dir/taskprolog.conf",
			syslog:      func() io.WriteCloser { return nil },
			prologBound: c.bound,
			prologAfter: func(d time.Duration) <-chan time.Time { asked <- d; return fire }}
		go func() {
			<-blocked
			close(fire)
		}()
		var code int
		err := faulttest.NoHang(t, "lens taskprolog", func() error { code = a.main(t.Context(), []string{"taskprolog"}); return nil })
		close(release)
		if err != nil {
			t.Fatal(err)
		}
		if d := <-asked; d != c.compute {
			t.Errorf("bound %v: the compute bound is %v, want %v", c.bound, d, c.compute)
		}
		if code != 0 || stdout.Len() != 0 {
			t.Errorf("bound %v: exit %d, stdout %q; want 0 and nothing", c.bound, code, stdout.String())
		}
		if c.report != "" && !strings.Contains(stderr.String(), c.report) {
			t.Errorf("bound %v: stderr %q, want %q", c.bound, stderr.String(), c.report)
		}
	}
}

// TestTaskPrologRankReports: the report prefix shows task ? when
// SLURM_PROCID is unusable (not the world size); with ranks = slurm,
// ranks a launcher would refuse are reported and not exported.
func TestTaskPrologRankReports(t *testing.T) {
	t.Parallel()
	step := prologRows()[1].env // SLURM_PROCID=1, SLURM_NTASKS=2, SLURM_LOCALID=1
	for _, c := range []struct {
		name   string
		kv     []string
		prefix string // the report prefix's task
		report string // "" when the ranks are exported
	}{
		{"valid", nil, "task 1 ", ""},
		{"last rank", []string{"SLURM_PROCID", "1", "SLURM_LOCALID", "0"}, "task 1 ", ""},
		{"procid not a number", []string{"SLURM_PROCID", "abc"}, "task ? ", "SLURM_PROCID=\"abc\" is not a base-10 integer"},
		{"procid empty", []string{"SLURM_PROCID", ""}, "task ? ", "SLURM_PROCID is not set"},
		{"negative rank", []string{"SLURM_PROCID", "-1"}, "task -1 ", "SLURM_PROCID=-1 is negative: the ranks are not exported"},
		{"rank = world size", []string{"SLURM_PROCID", "2"}, "task 2 ", "SLURM_PROCID=2 is not below SLURM_NTASKS=2: the ranks are not exported"},
		{"rank > world size", []string{"SLURM_PROCID", "7"}, "task 7 ", "SLURM_PROCID=7 is not below SLURM_NTASKS=2"},
		{"world size 0", []string{"SLURM_NTASKS", "0", "SLURM_PROCID", "0"}, "task 0 ", "SLURM_NTASKS=0 is not a world size (want 1 or more)"},
		{"negative local rank", []string{"SLURM_LOCALID", "-1"}, "task 1 ", "SLURM_LOCALID=-1 is negative: the ranks are not exported"},
		{"local rank = world size", []string{"SLURM_LOCALID", "2"}, "task 1 ", "SLURM_LOCALID=2 is not below SLURM_NTASKS=2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := maps.Clone(step)
			for i := 0; i < len(c.kv); i += 2 {
				env[c.kv[i]] = c.kv[i+1]
			}
			env[TaskPrologEnv] = "bogus" // a report, to see the prefix
			r, _ := prologIn(t, env, []byte("ranks = slurm\n"))
			if r.code != 0 {
				t.Fatal(r)
			}
			if !strings.Contains(r.stderr, "job 3 step 0 "+c.prefix+"node") {
				t.Errorf("stderr %q: want the prefix %q", r.stderr, c.prefix)
			}
			ca := slurmstepdApply(env, r.stdout)[carrier.EnvVar]
			if c.report == "" {
				if !strings.Contains(ca, "nv.dl.rank=") {
					t.Errorf("carrier %q lacks the ranks", ca)
				}
				return
			}
			if !strings.Contains(r.stderr, c.report) {
				t.Errorf("stderr %q lacks %q", r.stderr, c.report)
			}
			if strings.Contains(c.report, "not exported") && strings.Contains(ca, "nv.dl.rank") {
				t.Errorf("carrier %q holds ranks, want none", ca)
			}
		})
	}
}

// TestTaskPrologPolicyFiles pins which policy files are reported: a
// missing default file is silent, a missing file named by --policy or
// LENS_TASKPROLOG_POLICY is reported; warnings (a quoted value, an inline
// comment) are reported and the policy applied; with ranks = slurm the
// batch step never gets ranks.
func TestTaskPrologPolicyFiles(t *testing.T) {
	t.Parallel()
	rows := prologRows()
	batch, step := rows[0].env, rows[1].env
	missing := filepath.Join(t.TempDir(), "missing.conf")
	var stdout, stderr bytes.Buffer
	run := func(env map[string]string, args ...string) (string, string) {
		stdout.Reset()
		stderr.Reset()
		a := &app{stdout: &stdout, stderr: &stderr, env: environ.Map(env), policyPath: missing, prologBound: time.Minute,
			hostname: func() (string, error) { return "node-x", nil }, syslog: func() io.WriteCloser { return nil }}
		if code := a.main(t.Context(), append([]string{"taskprolog"}, args...)); code != 0 {
			t.Fatalf("exit %d", code)
		}
		return stdout.String(), stderr.String()
	}
	if out, errText := run(step); errText != "" || !strings.Contains(out, "NEMO_LENS_RUN_ID=3") {
		t.Errorf("missing default policy: stderr %q, stdout %q; want silence and the exports", errText, out)
	}
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"--policy", step, []string{"--policy", missing}},
		{TaskPrologPolicyEnv, with(step, TaskPrologPolicyEnv, missing), nil},
	} {
		out, errText := run(c.env, c.args...)
		if !strings.Contains(errText, "policy "+missing+": open "+missing+": no such file or directory") || !strings.Contains(out, "NEMO_LENS_RUN_ID=3") {
			t.Errorf("%s names a missing file: stderr %q, stdout %q; want it reported and the exports", c.name, errText, out)
		}
	}
	policy := filepath.Join(t.TempDir(), "p.conf")
	if err := os.WriteFile(policy, []byte("ranks = slurm\nservice_name = \"jobs\"\nenv.OTEL_EXPORTER_OTLP_HEADERS = a=b # token\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errText := run(step, "--policy", policy)
	for _, w := range []string{":2: service_name: the value is quoted", ":3: env.OTEL_EXPORTER_OTLP_HEADERS: the value holds \" #\""} {
		if !strings.Contains(errText, w) {
			t.Errorf("stderr %q lacks the warning %q", errText, w)
		}
	}
	if strings.Contains(errText, "token") || !strings.Contains(out, "export OTEL_SERVICE_NAME=\"jobs\"\n") || !strings.Contains(out, "nv.dl.rank=1") {
		t.Errorf("a policy with warnings: stdout %q stderr %q; want it applied, no value in the reports", out, errText)
	}
	for _, env := range []map[string]string{batch, rows[2].env, rows[4].env} {
		out, _ := run(env, "--policy", policy)
		if ca := slurmstepdApply(env, out)[carrier.EnvVar]; ca == "" || strings.Contains(ca, "nv.dl.rank") || strings.Contains(ca, "nv.dl.world_size") {
			t.Errorf("batch step (SLURM_PROCID=%s) with ranks = slurm: carrier %q, want one without ranks", env["SLURM_PROCID"], ca)
		}
	}
}

func with(base map[string]string, kv ...string) map[string]string {
	m := maps.Clone(base)
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// TestTaskPrologLogTwoUsers: in the guide's log directory (root's, mode
// 1733) with the guide's per-user log (log = DIR/taskprolog.%u.log),
// the reports of two users — root and nobody (65534), run with setpriv as
// slurmstepd runs a task as its job's user — both reach the directory,
// each in a file of its own (mode 0600, owned by its user); a file another
// user planted under a user's name is refused. A single file (no %u) that
// the admin created with mode 0622 takes both users' reports. On 85caa10
// the first writer created the one file 0644 and the other's reports
// failed.
func TestTaskPrologLogTwoUsers(t *testing.T) {
	t.Parallel()
	setpriv, err := exec.LookPath("setpriv")
	if os.Geteuid() != 0 || err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("needs root and setpriv (util-linux): euid %d, %v", os.Geteuid(), err)
		}
		t.Skipf("needs root and setpriv (util-linux): euid %d, %v", os.Geteuid(), err)
	}
	// Directories every user can traverse (t.TempDir's are 0700).
	base, err := os.MkdirTemp("", "lens-tp-users")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	bin := filepath.Join(base, "lens")
	data, err := os.ReadFile(lensBin)
	if err != nil {
		t.Fatal(err)
	}
	logDir := filepath.Join(base, "log")
	// Written under syscall.ForkLock: a process forked meanwhile by a
	// parallel test would hold it open for writing (text file busy).
	writeScript(t, bin, string(data))
	for _, err := range []error{os.Chmod(base, 0o755), os.Mkdir(logDir, 0o755), os.Chmod(logDir, 0o1733)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	shared := filepath.Join(logDir, "shared.log")
	if err := os.WriteFile(shared, nil, 0o622); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o622); err != nil {
		t.Fatal(err)
	}
	const nobody = 65534
	run := func(uid int, log string) string {
		policy := filepath.Join(base, fmt.Sprintf("p%d-%d.conf", uid, len(log)))
		if err := os.WriteFile(policy, []byte("syslog = off\nlog = "+log+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{bin, "taskprolog", "--policy", policy}
		if uid != 0 {
			args = append([]string{"--reuid", fmt.Sprint(uid), "--regid", fmt.Sprint(uid), "--clear-groups", "--"}, args...)
			args = append([]string{setpriv}, args...)
		}
		ctx, cancel := context.WithTimeout(t.Context(), liveness)
		defer cancel()
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Env = cliEnv(with(prologRows()[1].env, TaskPrologEnv, fmt.Sprintf("user%d", uid)))
		cmd.Dir = base
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("uid %d: %v: %s", uid, err, out)
		}
		return string(out)
	}
	perUser := filepath.Join(logDir, "taskprolog.%u.log")
	for _, uid := range []int{0, nobody, 0, nobody} {
		if out := run(uid, perUser); strings.Contains(out, ": log ") {
			t.Errorf("uid %d: the log failed: %s", uid, out)
		}
		run(uid, shared)
	}
	for _, uid := range []int{0, nobody} {
		path := filepath.Join(logDir, fmt.Sprintf("taskprolog.%d.log", uid))
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatalf("uid %d's log: %v", uid, err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		data, _ := os.ReadFile(path)
		if int(st.Uid) != uid || fi.Mode().Perm() != 0o600 || strings.Count(string(data), fmt.Sprintf(`LENS_TASKPROLOG="user%d"`, uid)) != 2 {
			t.Errorf("%s: owner %d mode %v, %q; want owner %d, 0600, two reports of its user", path, st.Uid, fi.Mode().Perm(), data, uid)
		}
	}
	if data, _ := os.ReadFile(shared); strings.Count(string(data), `"user0"`) != 2 || strings.Count(string(data), fmt.Sprintf(`"user%d"`, nobody)) != 2 {
		t.Errorf("the shared 0622 log holds %q, want two reports of each user", data)
	}
	// A file planted by another user under nobody's name (here root's,
	// 0666): nobody refuses it.
	planted := filepath.Join(logDir, "planted.65534.log")
	if err := os.WriteFile(planted, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(planted, 0o666); err != nil {
		t.Fatal(err)
	}
	out := run(nobody, filepath.Join(logDir, "planted.%u.log"))
	if !strings.Contains(out, "belongs to another user (uid 0)") {
		t.Errorf("a planted per-user file: %s, want it refused", out)
	}
	if data, _ := os.ReadFile(planted); len(data) != 0 {
		t.Errorf("the planted file got %q", data)
	}
}
