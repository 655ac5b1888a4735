//go:build linux

package bounded_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nemolens/lens-go/internal/bounded"
)

// TestOpenRefusesWhatIsNotRegular: a FIFO without a writer, a FIFO with a
// writer that never writes, a directory, a device and a socket are refused
// at once, naming the file and its kind; a regular file is read, up to its
// limit and not past it.
func TestOpenRefusesWhatIsNotRegular(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lonely, held := filepath.Join(dir, "lonely"), filepath.Join(dir, "held")
	for _, p := range []string{lonely, held} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	w, err := os.OpenFile(held, os.O_RDWR, 0) // a writer that never writes
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	sock := filepath.Join(dir, "sock")
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: sock}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, kind string }{
		{lonely, "a FIFO"}, {held, "a FIFO"}, {dir, "a directory"}, {"/dev/null", "a device"},
	} {
		_, err := bounded.ReadFile(tc.path, 10)
		if !errors.Is(err, bounded.ErrNotRegular) || !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), tc.kind) {
			t.Errorf("ReadFile(%s) = %v; want ErrNotRegular naming it and %q", tc.path, err, tc.kind)
		}
	}
	// A socket cannot be opened at all (ENXIO): refused at once too.
	if _, err := bounded.ReadFile(sock, 10); err == nil || !strings.Contains(err.Error(), sock) {
		t.Errorf("ReadFile(socket) = %v; want an error naming it", err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := bounded.ReadFile(file, 10); err != nil || string(b) != "0123456789" {
		t.Errorf("ReadFile at its limit = %q, %v", b, err)
	}
	if _, err := bounded.ReadFile(file, 9); !errors.Is(err, bounded.ErrTooLarge) {
		t.Errorf("ReadFile past its limit: %v, want ErrTooLarge", err)
	}
}

// TestWithinReturnsAtTheContextsEnd: a call that never returns is left
// behind when the context ends; a call that returns first wins.
func TestWithinReturnsAtTheContextsEnd(t *testing.T) {
	t.Parallel()
	block := make(chan struct{})
	defer close(block)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := bounded.Within(ctx, func() (int, error) { <-block; return 1, nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("Within a blocked call: %v, want context.Canceled", err)
	}
	if v, err := bounded.Within(context.Background(), func() (int, error) { return 7, nil }); v != 7 || err != nil {
		t.Errorf("Within = %d, %v; want 7, nil", v, err)
	}
}

// TestChild: a child's lines come in order, then io.EOF; Stop returns at
// once with the child blocked and kills its group (the child's own child
// too). EndWithParent: cmd/lens's TestGPUProbeEndsWithLens.
func TestChild(t *testing.T) {
	t.Parallel()
	c, err := bounded.Start(bounded.Command{Path: "/bin/sh", Args: []string{"sh", "-c", "echo a; echo b"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		line, err := c.Next(context.Background())
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(line))
	}
	<-c.Exited()
	c.Stop()
	if strings.Join(got, ",") != "a,b" {
		t.Errorf("lines %q, want a, b", got)
	}

	// A child whose own child holds the output open and sleeps.
	c, err = bounded.Start(bounded.Command{Path: "/bin/sh", Args: []string{"sh", "-c", "echo $$; sleep 3600 & echo $!; wait"}})
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for range 2 {
		line, err := c.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(string(line))
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	c.Stop()
	if _, err := c.Next(context.Background()); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Next after Stop: %v, want os.ErrClosed", err)
	}
	<-c.Exited() // the group was killed: the shell ends (its sleep too)
	// A killed process may still run its way out (state R) for a moment,
	// then stays a zombie until init reaps it: neither is alive.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pids[1]) + "/stat")
		if err != nil || strings.Contains(string(b), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child's child %d outlived Stop: %s", pids[1], b)
		}
	}
}
