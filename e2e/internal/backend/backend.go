// Package backend runs one real backend binary (Prometheus, the log
// collector) on loopback for the end-to-end tests: free ports picked at
// start, a readiness URL polled until it answers 200, the process's output
// kept in a log file, SIGTERM (then SIGKILL) on Stop. Packages
// e2e/internal/prometheus and e2e/internal/otelcol build on it; it reads no
// environment variables itself and passes the test's environment, minus
// OTEL_*, to the child.
package backend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

const (
	// ReadyTimeout caps the wait for the readiness URL in Start.
	ReadyTimeout = 60 * time.Second
	// PollInterval is the interval of the readiness and query polls.
	PollInterval = 50 * time.Millisecond
	// StopGrace is how long Stop waits after SIGTERM before it kills.
	StopGrace = 15 * time.Second

	startAttempts = 3  // retries when a picked port was taken in the meantime
	LogTailLines  = 40 // lines of the backend's log quoted in errors
)

// Spec describes how to run one backend.
type Spec struct {
	Name    string // for messages: "prometheus", "otelcol"
	Bin     string // absolute path of the binary
	WorkDir string // existing directory: the process's working directory and its log
	NPorts  int    // number of loopback ports to pick
	// Args returns the command-line arguments for the picked ports.
	Args func(ports []int) []string
	// Env returns extra environment entries for the picked ports (may be nil).
	Env func(ports []int) []string
	// ReadyURL returns the URL that answers 200 once the backend is ready.
	ReadyURL func(ports []int) string
}

// Proc is one running backend process. Its methods are safe for concurrent
// use.
type Proc struct {
	spec    Spec
	cmd     *exec.Cmd
	ports   []int
	logPath string
	client  *http.Client

	done    chan struct{}
	waitErr error // read only after done is closed

	stopOnce sync.Once
	stopErr  error
}

var errPortInUse = errors.New("a port was already in use")

// Start runs the backend and waits until spec.ReadyURL answers 200 (polled
// every PollInterval, at most ReadyTimeout or until ctx ends). If the process
// exits first, the error quotes its status and the tail of its log; a port
// taken in the meantime makes Start retry with new ports.
func Start(ctx context.Context, spec Spec) (*Proc, error) {
	if fi, err := os.Stat(spec.Bin); err != nil {
		return nil, fmt.Errorf("%s: binary: %w", spec.Name, err)
	} else if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return nil, fmt.Errorf("%s: binary %s is not an executable file", spec.Name, spec.Bin)
	}
	for attempt := 1; ; attempt++ {
		p, err := start(ctx, spec)
		if err == nil {
			return p, nil
		}
		if attempt < startAttempts && errors.Is(err, errPortInUse) && ctx.Err() == nil {
			continue
		}
		return nil, err
	}
}

func start(ctx context.Context, spec Spec) (*Proc, error) {
	ports, err := FreePorts(spec.NPorts)
	if err != nil {
		return nil, fmt.Errorf("%s: picking ports: %w", spec.Name, err)
	}
	logPath := spec.WorkDir + "/" + spec.Name + ".log"
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", spec.Name, err)
	}
	defer logFile.Close() // the child keeps its own descriptor

	cmd := exec.Command(spec.Bin, spec.Args(ports)...)
	cmd.Dir = spec.WorkDir
	cmd.Env = childEnv()
	if spec.Env != nil {
		cmd.Env = append(cmd.Env, spec.Env(ports)...)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: starting %s: %w", spec.Name, spec.Bin, err)
	}
	p := &Proc{
		spec: spec, cmd: cmd, ports: ports, logPath: logPath,
		client: &http.Client{Transport: &http.Transport{
			Proxy:       nil, // never route loopback queries through a proxy
			DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		}},
		done: make(chan struct{}),
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	if err := p.waitReady(ctx); err != nil {
		_ = cmd.Process.Kill()
		<-p.done
		p.client.CloseIdleConnections()
		return nil, err
	}
	return p, nil
}

func (p *Proc) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
	defer cancel()
	url := p.spec.ReadyURL(p.ports)
	began := time.Now()
	ticker := time.NewTicker(PollInterval)
	defer ticker.Stop()
	last := "no answer yet"
	for {
		select {
		case <-p.done:
			return p.exitedEarly()
		default:
		}
		status, _, err := p.Get(ctx, url)
		switch {
		case err == nil && status == http.StatusOK:
			return nil
		case err != nil:
			last = err.Error()
		default:
			last = "HTTP " + strconv.Itoa(status)
		}
		select {
		case <-p.done:
			return p.exitedEarly()
		case <-ctx.Done():
			return fmt.Errorf("%s (pid %d): not ready after %v: %v (last probe of %s: %s)%s", p.spec.Name,
				p.PID(), time.Since(began).Round(time.Millisecond), ctx.Err(), url, last, p.logTailSuffix())
		case <-ticker.C:
		}
	}
}

func (p *Proc) exitedEarly() error {
	tail := p.LogTail(LogTailLines)
	err := fmt.Errorf("%s (pid %d) exited before it was ready: %v%s", p.spec.Name, p.PID(), p.waitErr, formatTail(p.spec.Name, tail))
	if strings.Contains(tail, "address already in use") {
		return fmt.Errorf("%w: %w", errPortInUse, err)
	}
	return err
}

// Stop sends SIGTERM, then SIGKILL after StopGrace. It returns an error if
// the backend had to be killed, exited with an error, or had exited on its
// own before Stop (a crash during the test), quoting the tail of its log.
// Later calls return the first call's result.
func (p *Proc) Stop() error {
	p.stopOnce.Do(func() {
		defer p.client.CloseIdleConnections()
		select {
		case <-p.done:
			p.stopErr = fmt.Errorf("%s (pid %d) had exited before Stop: %v%s", p.spec.Name, p.PID(), p.waitErr, p.logTailSuffix())
			return
		default:
		}
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		timer := time.NewTimer(StopGrace)
		defer timer.Stop()
		select {
		case <-p.done:
			if p.waitErr != nil && !terminatedBy(p.waitErr, syscall.SIGTERM) {
				p.stopErr = fmt.Errorf("%s (pid %d) exited with %v after SIGTERM%s", p.spec.Name, p.PID(), p.waitErr, p.logTailSuffix())
			}
		case <-timer.C:
			_ = p.cmd.Process.Kill()
			<-p.done
			p.stopErr = fmt.Errorf("%s (pid %d) did not stop within %v of SIGTERM; killed%s", p.spec.Name, p.PID(), StopGrace, p.logTailSuffix())
		}
	})
	return p.stopErr
}

func terminatedBy(err error, sig syscall.Signal) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

// PID is the backend's process id.
func (p *Proc) PID() int { return p.cmd.Process.Pid }

// Ports are the loopback ports picked for this process, in Spec order.
func (p *Proc) Ports() []int { return append([]int(nil), p.ports...) }

// LogPath is the file receiving the backend's stdout and stderr.
func (p *Proc) LogPath() string { return p.logPath }

// HostPort is "127.0.0.1:<port>".
func HostPort(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// LogTail returns the last n lines of the backend's output (from at most its
// last MiB).
func (p *Proc) LogTail(n int) string {
	const max = 1 << 20
	f, err := os.Open(p.logPath)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", p.logPath, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > max {
		_, _ = f.Seek(fi.Size()-max, io.SeekStart)
	}
	b, _ := io.ReadAll(io.LimitReader(f, max))
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (p *Proc) logTailSuffix() string { return formatTail(p.spec.Name, p.LogTail(LogTailLines)) }

func formatTail(name, tail string) string {
	if strings.TrimSpace(tail) == "" {
		return "\n--- " + name + " log: (empty)"
	}
	return "\n--- " + name + " log (tail) ---\n" + tail + "\n--- end of " + name + " log ---"
}

// Get performs one GET (5 s per request) and returns status and body.
func (p *Proc) Get(ctx context.Context, url string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	return resp.StatusCode, body, err
}

// FreePorts reserves n distinct loopback ports by listening on 127.0.0.1:0,
// then releases them. Another process may take one in between; Start
// retries in that case.
func FreePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}

// childEnv is the test's environment without OTEL_* variables (the
// collector reads some of them).
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") {
			env = append(env, kv)
		}
	}
	return env
}

// Snippet shortens an HTTP body for error messages.
func Snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 512 {
		return s[:512] + "…"
	}
	return s
}
