// Package usage reads what the command of lens exec used
// (docs/usage.md): the resource usage of the wait4 that reaped it, as the
// exec span's attributes; the memory.peak of its cgroup when that cgroup
// holds this rank alone; and, while it runs, its live process tree from
// /proc for the per-rank metrics, which [Register] observes.
package usage
