package supervise

import (
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/nemolens/lens-go/internal/bounded"
)

// Real-time signals a process may use: glibc keeps 32 and 33 for itself.
const (
	sigRTMin = 34
	sigRTMax = 64
)

// relayed are the signals passed on to the command.
var relayed = func() map[syscall.Signal]bool {
	m := map[syscall.Signal]bool{
		syscall.SIGHUP: true, syscall.SIGINT: true, syscall.SIGQUIT: true, syscall.SIGABRT: true,
		syscall.SIGUSR1: true, syscall.SIGUSR2: true, syscall.SIGALRM: true, syscall.SIGTERM: true,
		syscall.SIGWINCH: true, syscall.SIGIO: true, syscall.SIGPWR: true,
		syscall.SIGTSTP: true, syscall.SIGCONT: true,
	}
	for s := sigRTMin; s <= sigRTMax; s++ {
		m[syscall.Signal(s)] = true
	}
	return m
}()

// sigNames are the names of the relayed signals, as kill -l spells them.
var sigNames = func() map[syscall.Signal]string {
	m := map[syscall.Signal]string{
		syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT", syscall.SIGABRT: "SIGABRT",
		syscall.SIGUSR1: "SIGUSR1", syscall.SIGUSR2: "SIGUSR2", syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM",
		syscall.SIGWINCH: "SIGWINCH", syscall.SIGIO: "SIGIO", syscall.SIGPWR: "SIGPWR",
		syscall.SIGTSTP: "SIGTSTP", syscall.SIGCONT: "SIGCONT",
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
