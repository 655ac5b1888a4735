package supervise

// Wait waits for the command to exit.
func (p *Process) Wait() Exit {
	<-p.done
	return p.exit
}

// Interrupted is closed when SIGINT, SIGTERM, SIGHUP or SIGQUIT arrives
// after the command has exited: lens's remaining work (the telemetry
// flush) should end at once.
func (p *Process) Interrupted() <-chan struct{} { return p.interrupted }
