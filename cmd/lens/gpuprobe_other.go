//go:build !unix

package main

// dropSentFaults does nothing outside Unix.
func dropSentFaults() {}
