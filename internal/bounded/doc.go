// Package bounded is where lens reads what it does not control: files named
// by the driver, the kernel, the scheduler or the user (the NVIDIA driver's
// procfs, /proc and cgroup files, TLS files, the policy and the record of
// rounds), and the helper processes that may sleep on a hung driver. Every
// such read returns within its bound by construction, whatever the file is
// (docs/exec.md#what-runs-where):
//
//   - [Open] and [ReadFile] open without blocking and take regular files
//     only: a FIFO, a socket, a device or a directory is refused at once
//     with [ErrNotRegular], naming the file and its kind; [ReadFile] reads at
//     most its limit ([ErrTooLarge] beyond).
//   - [Within] bounds a call by a context: the caller goes on when the
//     context ends, the call is abandoned.
//   - [Child] runs a helper process (lens's GPU probe) in a process group of
//     its own, reads what it writes line by line until a deadline, and at the
//     end kills its group without waiting for it: a process asleep in a hung
//     driver cannot die until the driver returns, and a process, unlike a
//     goroutine, can be left behind.
//
// The package reads only the paths it is given and starts only the command
// it is given.
package bounded
