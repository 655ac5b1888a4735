// Package launch runs the real launchers of the end-to-end tests: Open MPI's
// mpirun (Debian's openmpi-bin) and torchrun (Debian's python3-torch, as
// /usr/bin/python3 -m torch.distributed.run), and holds the Python worker
// they start (pyworker.py). scripts/launchers-up.sh installs both packages
// when they are missing; this package only finds them and says what is
// missing.
package launch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// SystemPython is the interpreter that has Debian's torch (python3-torch):
// not the python3 of PATH, which may be another installation.
const SystemPython = "/usr/bin/python3"

// MPIRun returns the path of Open MPI's mpirun: mpirun.openmpi (the name
// Debian's openmpi-bin installs, whatever the mpirun alternative points at),
// else an mpirun that says it is Open MPI.
func MPIRun() (string, error) {
	mpi.once.Do(func() { mpi.path, mpi.err = findMPIRun() })
	return mpi.path, mpi.err
}

var mpi struct {
	once sync.Once
	path string
	err  error
}

func findMPIRun() (string, error) {
	if p, err := exec.LookPath("mpirun.openmpi"); err == nil {
		return p, nil
	}
	p, err := exec.LookPath("mpirun")
	if err != nil {
		return "", errors.New("no mpirun.openmpi or mpirun on PATH (scripts/launchers-up.sh installs Debian's openmpi-bin)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, p, "--version").CombinedOutput()
	if !strings.Contains(string(out), "Open MPI") {
		return "", fmt.Errorf("%s is not Open MPI (%q); install openmpi-bin", p, strings.TrimSpace(string(out)))
	}
	return p, nil
}

// Hydra returns the path of MPICH's Hydra launcher, mpiexec.hydra
// (Debian's mpich, beside Open MPI: it registers mpirun and mpiexec with a
// lower alternatives priority, so they stay Open MPI's), or why there is
// none.
func Hydra() (string, error) {
	p, err := exec.LookPath("mpiexec.hydra")
	if err != nil {
		return "", errors.New("no mpiexec.hydra on PATH (scripts/launchers-up.sh installs Debian's mpich)")
	}
	return p, nil
}

// HydraArgs returns the arguments of mpiexec.hydra starting np copies of
// command on this host: the fork launcher (no ssh, and no srun inside a
// Slurm allocation).
func HydraArgs(np int, command ...string) []string {
	return append([]string{"-launcher", "fork", "-n", strconv.Itoa(np)}, command...)
}

// MPIRunArgs returns the arguments of mpirun starting np copies of command:
// --allow-run-as-root when running as root, --oversubscribe (more ranks than
// cores), and Open MPI's own tcp/self transports only (no probing for
// fabrics the machine does not have).
func MPIRunArgs(np int, command ...string) []string {
	var args []string
	if os.Geteuid() == 0 {
		args = append(args, "--allow-run-as-root")
	}
	args = append(args, "--oversubscribe", "--mca", "btl", "self,tcp", "-np", strconv.Itoa(np))
	return append(args, command...)
}

// Torch returns the version of torch that SystemPython imports, or why it
// cannot.
func Torch() (string, error) {
	torch.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, SystemPython, "-c", "import torch; print(torch.__version__)").CombinedOutput()
		if err != nil {
			torch.err = fmt.Errorf("%s cannot import torch (scripts/launchers-up.sh installs Debian's python3-torch): %v: %s",
				SystemPython, err, strings.TrimSpace(string(out)))
			return
		}
		torch.version = strings.TrimSpace(string(out))
	})
	return torch.version, torch.err
}

var torch struct {
	once    sync.Once
	version string
	err     error
}

// Torchrun describes one torchrun agent (torch 1.13's flags: underscore
// spellings only).
type Torchrun struct {
	NNodes       int    // --nnodes
	NProcPerNode int    // --nproc_per_node
	RdzvID       string // --rdzv_id
	Endpoint     string // --rdzv_endpoint, with --rdzv_backend c10d
	MaxRestarts  int    // --max_restarts
	NoPython     bool   // --no_python: the command is not a Python script
}

// Args returns the command line of the agent: SystemPython -m
// torch.distributed.run with the flags, then command. --monitor_interval 1
// keeps restarts quick; --redirects 9:3 --tee 9:3 (a local rank that does not
// exist) works around torch 1.13 on Python 3.11, which crashes before
// starting any worker without a mapping.
func (t Torchrun) Args(command ...string) []string {
	args := []string{SystemPython, "-m", "torch.distributed.run",
		"--nnodes", strconv.Itoa(t.NNodes), "--nproc_per_node", strconv.Itoa(t.NProcPerNode),
		"--rdzv_backend", "c10d", "--rdzv_endpoint", t.Endpoint, "--rdzv_id", t.RdzvID,
		"--max_restarts", strconv.Itoa(t.MaxRestarts), "--monitor_interval", "1",
		"--redirects", "9:3", "--tee", "9:3"}
	if t.NoPython {
		args = append(args, "--no_python")
	}
	return append(args, command...)
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
