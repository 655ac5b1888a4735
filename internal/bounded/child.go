package bounded

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
)

// MaxLine bounds one line of a [Child]'s output: a longer one ends the
// reading with an error wrapping ErrTooLarge.
const MaxLine = 1 << 20

// Command is the helper process [Start] starts.
type Command struct {
	// Path is the executable: "/proc/self/exe" for lens itself.
	Path string
	// Args is its argument vector, Args[0] included.
	Args []string
	// Env is its environment.
	Env []string
}

// Child is a helper process started by [Start]: on Linux the leader of a
// process group of its own, with its standard error on the null device, its
// standard output a pipe that lens reads line by line ([Child.Next]), and
// its standard input a pipe that lens never writes: it reaches its end when
// lens ends, however lens ends, and a child that calls [EndWithParent] then
// kills its group. (The parent-death signal is no substitute: Linux sends
// it when the thread that forked the child ends, and Go ends threads.)
// [Child.Stop] kills the group and never waits for it.
type Child struct {
	cmd     *exec.Cmd
	out     *os.File // lens's end of the child's standard output
	in      *os.File // lens's end of the child's standard input, never written
	lines   chan []byte
	err     error // the reading's end (io.EOF: the child closed its output); set before lines is closed
	stopped chan struct{}
	exited  chan struct{} // closed once the child has been reaped
	stop    sync.Once
}

// Start starts c. Call [Child.Stop] once its output is read or no longer
// wanted.
func Start(c Command) (*Child, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("output pipe: %w", err)
	}
	ir, iw, err := os.Pipe()
	if err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("input pipe: %w", err)
	}
	cmd := &exec.Cmd{Path: c.Path, Args: c.Args, Env: c.Env, Stdin: ir, Stdout: w}
	ownGroup(cmd)
	err = cmd.Start()
	w.Close() // the child holds its own copies
	ir.Close()
	if err != nil {
		r.Close()
		iw.Close()
		return nil, err
	}
	ch := &Child{cmd: cmd, out: r, in: iw, lines: make(chan []byte), stopped: make(chan struct{}), exited: make(chan struct{})}
	go ch.read()
	go func() {
		// The only wait for the child: it returns when the child has ended
		// and been reaped, which for a process asleep in a hung driver is
		// when the driver returns (or never); nobody waits for it.
		_ = cmd.Wait()
		close(ch.exited)
	}()
	return ch, nil
}

// read passes the child's lines to Next until its output ends, fails or
// Stop closes it.
func (c *Child) read() {
	s := bufio.NewScanner(c.out)
	s.Buffer(make([]byte, 0, 4096), MaxLine)
	defer close(c.lines)
	for s.Scan() {
		line := append([]byte(nil), s.Bytes()...)
		select {
		case c.lines <- line:
		case <-c.stopped:
			c.err = os.ErrClosed
			return
		}
	}
	switch err := s.Err(); {
	case err == bufio.ErrTooLong:
		c.err = fmt.Errorf("a line of its output: %w (more than %d bytes)", ErrTooLarge, MaxLine)
	case err != nil:
		c.err = err
	default:
		c.err = io.EOF
	}
}

// Next returns the next line the child wrote, without its newline; io.EOF
// once the child has closed its output (it exited, or closed it); ctx's
// error when ctx ends first, and os.ErrClosed after Stop. It never blocks
// past ctx's end or Stop.
func (c *Child) Next(ctx context.Context) ([]byte, error) {
	select {
	case line, ok := <-c.lines:
		if !ok {
			return nil, c.err
		}
		return line, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Pid is the child's process id (and, on Linux, its process group's).
func (c *Child) Pid() int { return c.cmd.Process.Pid }

// Exited is closed once the child has ended and been reaped.
func (c *Child) Exited() <-chan struct{} { return c.exited }

// Stopped is closed once Stop has been called.
func (c *Child) Stopped() <-chan struct{} { return c.stopped }

// Stop kills the child's process group (SIGKILL; outside Linux the child
// alone) and closes lens's end of its output, so that Next returns at once.
// It does not wait: a goroutine reaps the child whenever it ends, which a
// process asleep in a hung driver does only when the driver returns. The
// group id stays allocated while any member lives, so the kill cannot reach
// an unrelated group unless every member has ended and the number was
// reused in between. Stop may be called more than once.
func (c *Child) Stop() {
	c.stop.Do(func() {
		_ = killGroup(c.cmd)
		close(c.stopped)
		_ = c.out.Close()
		_ = c.in.Close()
	})
}

// EndWithParent is for the helper process itself: once its standard input
// (the pipe [Start] gives it) reaches its end, because the lens that
// started it has ended or stopped it, it kills its own process group (on
// Linux; outside Linux it exits), so that nothing it started outlives lens.
func EndWithParent(stdin io.Reader) {
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		endGroup()
	}()
}
