package main

import (
	"flag"
	"fmt"
	"net"
	"time"
)

// blackholeCommand listens on a TCP port, prints its address, and accepts
// connections that it then never answers, until it is killed or -for has
// passed: a collector that hangs, so that lens exec's flush runs into
// --flush-timeout.
func blackholeCommand(args []string) error {
	fs := flag.NewFlagSet("blackhole", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on")
	lifetime := fs.Duration("for", 10*time.Minute, "exit after this long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr())
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			heldConns = append(heldConns, c) // never read, written or closed
		}
	}()
	time.Sleep(*lifetime)
	return nil
}

// heldConns keeps the blackhole's connections open (only its accepting
// goroutine touches it).
var heldConns []net.Conn
