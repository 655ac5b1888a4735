//go:build !linux

package supervise

import (
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// Process is a started command. Outside Linux it is a plain child: PATH
// is searched by exec.LookPath, every subscribed signal is passed on, and
// there is no parent-death signal, process group or reaping of orphans.
type Process struct {
	proc        *os.Process
	path        string
	mode        Mode
	done        chan struct{}
	exit        Exit
	interrupted chan struct{}
	intOnce     sync.Once
	closed      chan struct{}
	closeOnce   sync.Once
	relayDone   chan struct{}
	sigs        *Signals
}

// Start starts the command.
func Start(c *Command) (*Process, error) {
	name := c.Args[0]
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, &StartError{Name: name, Searched: true, Err: syscall.ENOENT}
	}
	proc, err := os.StartProcess(path, c.Args, &os.ProcAttr{Env: c.Env, Files: []*os.File{c.Stdin, c.Stdout, c.Stderr}})
	if err != nil {
		return nil, &StartError{Name: name, Err: err}
	}
	p := &Process{proc: proc, path: path, mode: ModeRelay, sigs: c.Signals,
		done: make(chan struct{}), interrupted: make(chan struct{}), closed: make(chan struct{}), relayDone: make(chan struct{})}
	go func() {
		defer close(p.done)
		ps, err := proc.Wait()
		if err != nil {
			p.exit = Exit{Code: -1}
			return
		}
		p.exit = Exit{Code: ps.ExitCode()}
	}()
	go func() {
		defer close(p.relayDone)
		if p.sigs == nil {
			return
		}
		for {
			select {
			case s := <-p.sigs.c:
				select {
				case <-p.done:
					p.intOnce.Do(func() { close(p.interrupted) })
				default:
					_ = proc.Signal(s)
				}
			case <-p.closed:
				return
			}
		}
	}()
	return p, nil
}

// Pid is the command's process id.
func (p *Process) Pid() int { return p.proc.Pid }

// Path is the file that was run.
func (p *Process) Path() string { return p.path }

// Mode is the signal mode in force (always ModeRelay here).
func (p *Process) Mode() Mode { return p.mode }

// ReapOrphans does nothing outside Linux.
func (p *Process) ReapOrphans() {}

// Close ends the relay of signals.
func (p *Process) Close() {
	p.closeOnce.Do(func() { close(p.closed) })
	<-p.relayDone
}

// here is lens's process; outside Linux the place is not looked at.
func here() Place { return Place{} }
