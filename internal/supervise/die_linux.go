package supervise

import (
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// Die ends lens the way a signal ended the command, so that lens's parent
// (a shell, Slurm's accounting, a supervisor's Popen.returncode) sees the
// same wait status as for the bare command, not 128+N. Call it last: it
// sets sig's disposition to the default under the Go runtime, without a
// core file of lens, and sends sig to lens. It returns when sig does not
// end lens: as PID 1 the kernel ignores it; the caller then exits 128+N.
func Die(sig syscall.Signal) {
	if os.Getpid() == 1 || sig <= 0 || sig > sigRTMax || sig == syscall.SIGSTOP {
		return
	}
	// Sent to this thread, with sig unblocked in it: the default action
	// happens before tgkill returns to user space.
	runtime.LockOSThread()
	_ = syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
	// The kernel's struct sigaction (amd64, arm64): handler, flags,
	// restorer, mask. A zero handler is SIG_DFL.
	var dfl struct {
		handler, flags, restorer uintptr
		mask                     uint64
	}
	if sig == syscall.SIGKILL {
		_ = syscall.Tgkill(os.Getpid(), syscall.Gettid(), sig)
		return
	}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&dfl)), 0, 8, 0, 0); e != 0 {
		return
	}
	mask := uint64(1) << (sig - 1)
	_, _, _ = syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, 1 /* SIG_UNBLOCK */, uintptr(unsafe.Pointer(&mask)), 0, 8, 0, 0)
	_ = syscall.Tgkill(os.Getpid(), syscall.Gettid(), sig)
}
