// Package jaeger runs a real Jaeger v2 all-in-one binary on loopback for the
// end-to-end tests and queries it.
//
// The binary is built from Go modules by scripts/build-jaeger.sh (wrapper
// module tools/jaeger, pinned at github.com/jaegertracing/jaeger v1.76.0,
// which is the Jaeger v2.13.0 release). Start runs it with the embedded
// configuration (ConfigYAML): every listener on 127.0.0.1 with ports picked
// at start, in-memory storage, a 100 ms batch processor, no self-tracing and
// no metrics listener.
//
// Resource attributes sent over OTLP come back from the v1 query API as typed
// Process tags (Trace, FindTraces, WaitTraces); the v3 API returns the OTLP
// JSON of a trace (TraceOTLP).
package jaeger

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ConfigYAML is the Jaeger configuration Start writes to <workDir>/jaeger.yaml.
// Its ports come from the environment variables E2E_OTLP_GRPC_PORT,
// E2E_OTLP_HTTP_PORT, E2E_QUERY_PORT, E2E_QUERY_GRPC_PORT and E2E_HEALTH_PORT
// (collector syntax ${env:NAME:-default}).
//
//go:embed config.yaml
var ConfigYAML []byte

const (
	// ReadyTimeout caps the wait for GET /status -> 200 in Start.
	ReadyTimeout = 30 * time.Second
	// PollInterval is the interval of the readiness and query polls.
	PollInterval = 50 * time.Millisecond
	// StopGrace is how long Stop waits after SIGTERM before it kills.
	StopGrace = 10 * time.Second
	// DefaultWait bounds the query polls when ctx has no deadline.
	DefaultWait = 30 * time.Second

	startAttempts = 3  // retries when a picked port was taken in the meantime
	logTailLines  = 40 // lines of Jaeger's log quoted in errors
)

// Ports are the loopback TCP ports one Jaeger instance listens on.
type Ports struct {
	OTLPGRPC  int // OTLP/gRPC receiver
	OTLPHTTP  int // OTLP/HTTP receiver
	Query     int // query HTTP: UI, /api (v1) and /api/v3
	QueryGRPC int // query gRPC (api_v2 and api_v3)
	Health    int // healthcheckv2 HTTP: GET /status
}

func (p Ports) env() []string {
	return []string{
		"E2E_OTLP_GRPC_PORT=" + strconv.Itoa(p.OTLPGRPC),
		"E2E_OTLP_HTTP_PORT=" + strconv.Itoa(p.OTLPHTTP),
		"E2E_QUERY_PORT=" + strconv.Itoa(p.Query),
		"E2E_QUERY_GRPC_PORT=" + strconv.Itoa(p.QueryGRPC),
		"E2E_HEALTH_PORT=" + strconv.Itoa(p.Health),
	}
}

// Jaeger is one running Jaeger process. Its methods are safe for concurrent
// use.
type Jaeger struct {
	cmd     *exec.Cmd
	ports   Ports
	workDir string
	ownDir  bool // workDir was created by Start and is removed by Stop
	logPath string
	client  *http.Client

	done    chan struct{} // closed when the process has exited
	waitErr error         // cmd.Wait's result; read only after done is closed

	stopOnce sync.Once
	stopErr  error
}

var errPortInUse = errors.New("a port was already in use")

// Start runs the Jaeger binary at binPath on free loopback ports and waits
// until its health check reports ready (GET /status -> 200, polled every
// PollInterval for at most ReadyTimeout or until ctx ends).
//
// The configuration (ConfigYAML) is written to <workDir>/jaeger.yaml and the
// process's stdout and stderr go to <workDir>/jaeger.log. An empty workDir
// means a new temporary directory, removed by Stop. ctx bounds the start-up
// only, not the life of the process: call Stop when done.
//
// The process runs in its own session (setsid) with the test's environment
// minus OTEL_* variables. If it exits before it is ready, the error quotes its
// exit status and the tail of its log; when a picked port was taken in the
// meantime, Start retries with new ports.
func Start(ctx context.Context, binPath, workDir string) (*Jaeger, error) {
	if binPath == "" {
		return nil, errors.New("jaeger: no binary path given (build it with scripts/build-jaeger.sh)")
	}
	bin, err := filepath.Abs(binPath)
	if err != nil {
		return nil, fmt.Errorf("jaeger: %w", err)
	}
	if fi, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("jaeger: binary: %w (build it with scripts/build-jaeger.sh)", err)
	} else if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return nil, fmt.Errorf("jaeger: binary %s is not an executable file", bin)
	}

	ownDir := false
	if workDir == "" {
		if workDir, err = os.MkdirTemp("", "jaeger-e2e-"); err != nil {
			return nil, fmt.Errorf("jaeger: %w", err)
		}
		ownDir = true
	} else {
		if workDir, err = filepath.Abs(workDir); err == nil {
			err = os.MkdirAll(workDir, 0o755)
		}
		if err != nil {
			return nil, fmt.Errorf("jaeger: work dir: %w", err)
		}
	}
	cleanup := func() {
		if ownDir {
			_ = os.RemoveAll(workDir)
		}
	}
	configPath := filepath.Join(workDir, "jaeger.yaml")
	if err := os.WriteFile(configPath, ConfigYAML, 0o644); err != nil {
		cleanup()
		return nil, fmt.Errorf("jaeger: %w", err)
	}

	for attempt := 1; ; attempt++ {
		j, err := start(ctx, bin, workDir, configPath)
		if err == nil {
			j.ownDir = ownDir
			return j, nil
		}
		if attempt < startAttempts && errors.Is(err, errPortInUse) && ctx.Err() == nil {
			continue
		}
		cleanup()
		return nil, err
	}
}

func start(ctx context.Context, bin, workDir, configPath string) (*Jaeger, error) {
	ports, err := freePorts()
	if err != nil {
		return nil, fmt.Errorf("jaeger: picking ports: %w", err)
	}
	logPath := filepath.Join(workDir, "jaeger.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("jaeger: %w", err)
	}
	defer logFile.Close() // the child keeps its own descriptor

	cmd := exec.Command(bin, "--config=file:"+configPath)
	cmd.Dir = workDir
	cmd.Env = append(childEnv(), ports.env()...)
	cmd.Stdin = nil
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("jaeger: starting %s: %w", bin, err)
	}

	j := &Jaeger{
		cmd:     cmd,
		ports:   ports,
		workDir: workDir,
		logPath: logPath,
		client: &http.Client{Transport: &http.Transport{
			Proxy:       nil, // never route loopback queries through a proxy
			DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		}},
		done: make(chan struct{}),
	}
	go func() {
		j.waitErr = cmd.Wait()
		close(j.done)
	}()

	if err := j.waitReady(ctx); err != nil {
		j.kill()
		return nil, err
	}
	return j, nil
}

func (j *Jaeger) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
	defer cancel()
	url := j.healthURL()
	began := time.Now()
	ticker := time.NewTicker(PollInterval)
	defer ticker.Stop()
	var last string
	for {
		// Look for an early exit first: a failed bind exits within ~30 ms.
		select {
		case <-j.done:
			return j.exitedEarly()
		default:
		}
		status, _, err := j.get(ctx, url)
		switch {
		case err == nil && status == http.StatusOK:
			return nil
		case err != nil:
			last = err.Error()
		default:
			last = "HTTP " + strconv.Itoa(status)
		}
		select {
		case <-j.done:
			return j.exitedEarly()
		case <-ctx.Done():
			return fmt.Errorf("jaeger (pid %d): not ready after %v: %s (last probe of %s: %s)%s",
				j.PID(), time.Since(began).Round(time.Millisecond), ctx.Err(), url, last, j.logTailSuffix())
		case <-ticker.C:
		}
	}
}

func (j *Jaeger) exitedEarly() error {
	tail := j.LogTail(logTailLines)
	err := fmt.Errorf("jaeger (pid %d) exited before it was ready: %v%s", j.PID(), j.waitErr, formatTail(tail))
	if strings.Contains(tail, "address already in use") {
		return fmt.Errorf("%w: %w", errPortInUse, err)
	}
	return err
}

// kill ends a process that never became ready and waits for it.
func (j *Jaeger) kill() {
	_ = j.cmd.Process.Kill()
	<-j.done
	j.client.CloseIdleConnections()
}

// Stop ends the process it started: SIGTERM to its PID, then SIGKILL if it has
// not exited after StopGrace. It returns an error if Jaeger had to be killed or
// had already exited on its own (a crash during the test), quoting the tail of
// its log. Stop is idempotent; later calls return the first call's result.
func (j *Jaeger) Stop() error {
	j.stopOnce.Do(func() {
		defer j.client.CloseIdleConnections()
		select {
		case <-j.done:
			j.stopErr = fmt.Errorf("jaeger (pid %d) had exited before Stop: %v%s",
				j.PID(), j.waitErr, j.logTailSuffix())
		default:
			_ = j.cmd.Process.Signal(syscall.SIGTERM)
			timer := time.NewTimer(StopGrace)
			defer timer.Stop()
			select {
			case <-j.done:
				if j.waitErr != nil && !terminatedBy(j.waitErr, syscall.SIGTERM) {
					j.stopErr = fmt.Errorf("jaeger (pid %d) exited with %v after SIGTERM%s",
						j.PID(), j.waitErr, j.logTailSuffix())
				}
			case <-timer.C:
				_ = j.cmd.Process.Kill()
				<-j.done
				j.stopErr = fmt.Errorf("jaeger (pid %d) did not stop within %v of SIGTERM; killed%s",
					j.PID(), StopGrace, j.logTailSuffix())
			}
		}
		if j.ownDir {
			_ = os.RemoveAll(j.workDir)
		}
	})
	return j.stopErr
}

func terminatedBy(err error, sig syscall.Signal) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

// Done is closed when the process has exited (after Stop, or on a crash).
func (j *Jaeger) Done() <-chan struct{} { return j.done }

// PID is the process id of the Jaeger process.
func (j *Jaeger) PID() int { return j.cmd.Process.Pid }

// Ports returns the loopback ports this instance listens on.
func (j *Jaeger) Ports() Ports { return j.ports }

// WorkDir is the directory holding jaeger.yaml and jaeger.log.
func (j *Jaeger) WorkDir() string { return j.workDir }

// LogPath is the file receiving Jaeger's stdout and stderr.
func (j *Jaeger) LogPath() string { return j.logPath }

// OTLPGRPCEndpoint is the OTLP/gRPC receiver as host:port ("127.0.0.1:N"),
// e.g. for otlptracegrpc.WithEndpoint with WithInsecure. Prefix "http://"
// for OTEL_EXPORTER_OTLP_ENDPOINT.
func (j *Jaeger) OTLPGRPCEndpoint() string { return hostPort(j.ports.OTLPGRPC) }

// OTLPHTTPEndpoint is the OTLP/HTTP receiver as host:port ("127.0.0.1:N"),
// e.g. for otlptracehttp.WithEndpoint with WithInsecure. Traces are accepted
// at http://<endpoint>/v1/traces.
func (j *Jaeger) OTLPHTTPEndpoint() string { return hostPort(j.ports.OTLPHTTP) }

// QueryURL is the base URL of the query HTTP server ("http://127.0.0.1:N"),
// serving /api/... (v1) and /api/v3/....
func (j *Jaeger) QueryURL() string { return "http://" + hostPort(j.ports.Query) }

// QueryGRPCEndpoint is the query gRPC server as host:port.
func (j *Jaeger) QueryGRPCEndpoint() string { return hostPort(j.ports.QueryGRPC) }

func (j *Jaeger) healthURL() string { return "http://" + hostPort(j.ports.Health) + "/status" }

func hostPort(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// Log returns Jaeger's captured output so far (at most the last 1 MiB).
func (j *Jaeger) Log() string {
	const max = 1 << 20
	f, err := os.Open(j.logPath)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", j.logPath, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > max {
		_, _ = f.Seek(fi.Size()-max, io.SeekStart)
	}
	b, _ := io.ReadAll(io.LimitReader(f, max))
	return string(b)
}

// LogTail returns the last n lines of Jaeger's captured output.
func (j *Jaeger) LogTail(n int) string {
	s := strings.TrimRight(j.Log(), "\n")
	if n <= 0 || s == "" {
		return ""
	}
	i := len(s)
	for k := 0; k < n; k++ {
		p := strings.LastIndexByte(s[:i], '\n')
		if p < 0 {
			return s
		}
		i = p
	}
	return s[i+1:]
}

func (j *Jaeger) logTailSuffix() string { return formatTail(j.LogTail(logTailLines)) }

func formatTail(tail string) string {
	if tail == "" {
		return "\n--- jaeger log: (empty)"
	}
	return "\n--- jaeger log (tail) ---\n" + tail + "\n--- end of jaeger log ---"
}

// get performs one GET with a per-request timeout and returns status and body.
func (j *Jaeger) get(ctx context.Context, url string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := j.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return resp.StatusCode, nil, err
	}
	return resp.StatusCode, body, nil
}

// freePorts reserves five distinct loopback ports by listening on
// 127.0.0.1:0, then releases them for Jaeger. Another process may take one in
// between; Start retries in that case.
func freePorts() (Ports, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	ports := make([]int, 5)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return Ports{}, err
		}
		ls = append(ls, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return Ports{OTLPGRPC: ports[0], OTLPHTTP: ports[1], Query: ports[2], QueryGRPC: ports[3], Health: ports[4]}, nil
}

// childEnv is the test's environment without OTEL_* variables (Jaeger is an
// OpenTelemetry Collector and would read some of them) and without the port
// variables Start sets itself.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "OTEL_") || strings.HasPrefix(kv, "E2E_") && isPortVar(kv) {
			continue
		}
		env = append(env, kv)
	}
	return env
}

func isPortVar(kv string) bool {
	name, _, _ := strings.Cut(kv, "=")
	for _, p := range (Ports{}).env() {
		if n, _, _ := strings.Cut(p, "="); n == name {
			return true
		}
	}
	return false
}

// snippet shortens an HTTP body for error messages.
func snippet(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > 512 {
		return string(b[:512]) + "…"
	}
	return string(b)
}
