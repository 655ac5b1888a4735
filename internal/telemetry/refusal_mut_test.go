package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"testing"
)

// TestGuardDialRecordsRefusalsOnly: only a refused connection is recorded
// as a refusal, and a connection that succeeds clears it
// (docs/testing.md#mutation; refusal.go, dial: `err != nil &&
// errors.Is(err, ECONNREFUSED)` as || took a missing socket for a refusal,
// `err == nil` as != kept the refusal after a good dial).
func TestGuardDialRecordsRefusalsOnly(t *testing.T) {
	t.Parallel()
	refused := func(g *RefusalGuard) error {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.lastRefused
	}
	g := NewRefusalGuard(nil)
	if _, err := g.dial(context.Background(), "unix:"+filepath.Join(t.TempDir(), "none.sock")); err == nil || refused(g) != nil {
		t.Fatalf("a missing socket: dial %v, refusal %v; want an error and no refusal", err, refused(g))
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	if _, err := g.dial(context.Background(), addr); !errors.Is(refused(g), ErrCollectorRefused) {
		t.Fatalf("a closed port: dial %v, refusal %v; want ErrCollectorRefused", err, refused(g))
	}
	l, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	conn, err := g.dial(context.Background(), l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if r := refused(g); r != nil {
		t.Errorf("after a good dial the refusal %v stays", r)
	}
}

// TestGuardRefusal: the refusal reported is the last refused dial, with its
// address, or ErrCollectorRefused alone when none was recorded (refusal.go,
// refusal: `g.lastRefused != nil` as == gave nil, or lost the dial error).
func TestGuardRefusal(t *testing.T) {
	t.Parallel()
	g := NewRefusalGuard(nil)
	if err := g.refusal(); err != ErrCollectorRefused {
		t.Errorf("no dial yet: %v, want ErrCollectorRefused", err)
	}
	dialErr := errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
	g.lastRefused = fmt.Errorf("%w: %w", ErrCollectorRefused, dialErr)
	if err := g.refusal(); !errors.Is(err, ErrCollectorRefused) || !errors.Is(err, dialErr) {
		t.Errorf("after a refused dial: %v, want ErrCollectorRefused and the dial error", err)
	}
}
