//go:build !unix

package main

import (
	"os"
	"os/exec"
	"os/signal"
)

func sacctProcessGroup(*exec.Cmd) {}

func killGroup(*exec.Cmd) error { return nil }

func notifyReckon(c chan<- os.Signal) { signal.Notify(c, os.Interrupt) }
