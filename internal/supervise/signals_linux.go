package supervise

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"github.com/nemolens/lens-go/internal/bounded"
)

// Real-time signals a process may use: glibc keeps 32 and 33 for itself.
const (
	sigRTMin = 34
	sigRTMax = 64
)

// relayed are the signals passed on to the command: every signal 1 to 64
// that a sender may mean for the command and that the Go runtime hands to
// os/signal when another process sends it (docs/exec.md#signal-fates).
// SIGILL, SIGTRAP, SIGBUS, SIGFPE, SIGSEGV, SIGSTKFLT and SIGSYS are among
// them: the runtime crashes for a fault of lens's own code, but hands the
// same signal sent with kill(2) or tgkill(2) to os/signal. Not relayed:
// SIGKILL and SIGSTOP (nobody can catch them), SIGCHLD and SIGPIPE (lens's
// own), SIGTTOU (lens ignores it: ignoreWhileRunning), SIGURG (the
// runtime's own preemption signal, which os/signal hands over too, so that
// lens cannot tell a sender's from the runtime's), SIGPROF (kept by the
// runtime's profiler: os/signal never sees it), 32 and 33 (glibc's, and
// the runtime's for 33) and 34 (SIGRTMIN: the runtime installs no handler).
var relayed = func() map[syscall.Signal]bool {
	m := map[syscall.Signal]bool{
		syscall.SIGHUP: true, syscall.SIGINT: true, syscall.SIGQUIT: true, syscall.SIGILL: true,
		syscall.SIGTRAP: true, syscall.SIGABRT: true, syscall.SIGBUS: true, syscall.SIGFPE: true,
		syscall.SIGUSR1: true, syscall.SIGSEGV: true, syscall.SIGUSR2: true, syscall.SIGALRM: true,
		syscall.SIGTERM: true, syscall.SIGSTKFLT: true, syscall.SIGCONT: true, syscall.SIGTSTP: true,
		syscall.SIGTTIN: true, syscall.SIGXCPU: true, syscall.SIGXFSZ: true, syscall.SIGVTALRM: true,
		syscall.SIGWINCH: true, syscall.SIGIO: true, syscall.SIGPWR: true, syscall.SIGSYS: true,
	}
	for s := sigRTMin + 1; s <= sigRTMax; s++ {
		m[syscall.Signal(s)] = true
	}
	return m
}()

// ignoreWhileRunning are the signals lens ignores while it runs, unless it
// was started with them ignored (then they stay so): SIGTTOU, which the
// kernel sends lens's process group when lens writes to (or takes back) a
// terminal it is in the background of (stty tostop). Caught, it would
// make that write restart for ever; at its default, it would stop lens,
// in ModeAside for good. lens catches it only while it forks the command,
// which therefore starts with it at its default.
var ignoreWhileRunning = []os.Signal{syscall.SIGTTOU}

// sigNames are the signals' names, as kill -l spells them.
var sigNames = func() map[syscall.Signal]string {
	m := map[syscall.Signal]string{
		syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT", syscall.SIGILL: "SIGILL",
		syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE",
		syscall.SIGKILL: "SIGKILL", syscall.SIGUSR1: "SIGUSR1", syscall.SIGSEGV: "SIGSEGV", syscall.SIGUSR2: "SIGUSR2",
		syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM", syscall.SIGSTKFLT: "SIGSTKFLT",
		syscall.SIGCHLD: "SIGCHLD", syscall.SIGCONT: "SIGCONT", syscall.SIGSTOP: "SIGSTOP", syscall.SIGTSTP: "SIGTSTP",
		syscall.SIGTTIN: "SIGTTIN", syscall.SIGTTOU: "SIGTTOU", syscall.SIGURG: "SIGURG", syscall.SIGXCPU: "SIGXCPU",
		syscall.SIGXFSZ: "SIGXFSZ", syscall.SIGVTALRM: "SIGVTALRM", syscall.SIGPROF: "SIGPROF", syscall.SIGWINCH: "SIGWINCH",
		syscall.SIGIO: "SIGIO", syscall.SIGPWR: "SIGPWR", syscall.SIGSYS: "SIGSYS",
	}
	for s := sigRTMin; s <= sigRTMax; s++ {
		m[syscall.Signal(s)] = "SIGRTMIN+" + strconv.Itoa(s-sigRTMin)
	}
	m[sigRTMin] = "SIGRTMIN"
	m[sigRTMax] = "SIGRTMAX"
	return m
}()

func subscribed() []os.Signal {
	out := []os.Signal{syscall.SIGCHLD, syscall.SIGPIPE}
	for s := range relayed {
		out = append(out, s)
	}
	return out
}

// uncatchable are the signals below SIGRTMAX for which the Go runtime
// installs no handler and that os/signal cannot subscribe to: 32 (glibc's
// SIGCANCEL) and 34 (SIGRTMIN, musl's SIGSYNCCALL). At their default they
// end lens.
var uncatchable = []syscall.Signal{32, sigRTMin}

// ignoreUncatchable ignores the uncatchable signals in lens. Call it only
// after the command has been forked (an ignored disposition is inherited),
// and only where what reaches lens reached the command too (ModeDirect).
func ignoreUncatchable() {
	// The kernel's struct sigaction (amd64, arm64): handler, flags,
	// restorer, mask. Handler 1 is SIG_IGN.
	ign := struct {
		handler, flags, restorer uintptr
		mask                     uint64
	}{handler: 1}
	for _, s := range uncatchable {
		_, _, _ = syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(s), uintptr(unsafe.Pointer(&ign)), 0, 8, 0, 0)
	}
}

// inheritedIgnored is the SigIgn mask of /proc/self/status (bit N-1 for
// signal N), read before lens subscribes: the runtime has replaced the
// inherited SIG_IGN of the signals it handles itself, but not of SIGHUP and
// SIGINT, nor of the job-control signals it leaves at their defaults.
func inheritedIgnored() uint64 {
	b, err := bounded.ReadFile("/proc/self/status", 64<<10)
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "SigIgn:"); ok {
			m, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return m
		}
	}
	return 0
}
