//go:build !linux

package lensprocessor

func openPidfd(int) int   { return -1 }
func pidfdAlive(int) bool { return false }
func closePidfd(int)      {}
