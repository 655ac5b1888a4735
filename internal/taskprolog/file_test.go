//go:build unix

package taskprolog_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/nemolens/lens-go/internal/faulttest"
	"github.com/nemolens/lens-go/internal/taskprolog"
)

// mkfifo makes a FIFO at path.
func mkfifo(t *testing.T, path string, mode uint32) {
	t.Helper()
	if err := syscall.Mkfifo(path, mode); err != nil {
		t.Fatal(err)
	}
}

// TestLoadPolicyNotRegular: a policy that is a FIFO (with no writer, and
// with a writer that never writes), a device, a directory or a socket is
// refused at once with ErrNotRegular, never read.
func TestLoadPolicyNotRegular(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	mkfifo(t, fifo, 0o644)
	held := filepath.Join(dir, "held-fifo")
	mkfifo(t, held, 0o644)
	// A writer that keeps the FIFO open and never writes: a read would
	// wait for it forever.
	w, err := os.OpenFile(held, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, path := range []string{fifo, held, os.DevNull, dir} {
		err := faulttest.NoHang(t, "LoadPolicy("+path+")", func() error { _, err := taskprolog.LoadPolicy(path); return err })
		var pe *taskprolog.PolicyError
		if !errors.Is(err, taskprolog.ErrNotRegular) || !errors.As(err, &pe) || pe.File != path {
			t.Errorf("LoadPolicy(%s): %v, want a *PolicyError wrapping ErrNotRegular", path, err)
		}
	}
}

// TestAppendLog: the log file is appended to in one write; a FIFO (with
// or without a reader), a device or a directory is refused at once; a
// symbolic link is not followed; a per-user file (%u) is created 0600 and
// refused when another user owns it.
func TestAppendLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	uid := os.Getuid()
	shared := filepath.Join(dir, "shared.log")
	for range 2 {
		if err := taskprolog.AppendLog(shared, uid, "line\n"); err != nil {
			t.Fatal(err)
		}
	}
	if data, _ := os.ReadFile(shared); string(data) != "line\nline\n" {
		t.Errorf("shared log %q", data)
	}
	perUser := filepath.Join(dir, "tp.%u.log")
	if err := taskprolog.AppendLog(perUser, uid, "mine\n"); err != nil {
		t.Fatal(err)
	}
	mine := taskprolog.LogPath(perUser, uid)
	if fi, err := os.Stat(mine); err != nil || fi.Mode().Perm() != 0o600 || !strings.HasSuffix(mine, "/tp."+itoa(uid)+".log") {
		t.Errorf("per-user log %s: %v %v, want mode 0600", mine, fi, err)
	}
	fifo := filepath.Join(dir, "fifo.log")
	mkfifo(t, fifo, 0o666)
	readFifo := filepath.Join(dir, "read-fifo.log")
	mkfifo(t, readFifo, 0o666)
	r, err := os.OpenFile(readFifo, os.O_RDWR, 0) // a reader that never reads
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	link := filepath.Join(dir, "link.log")
	if err := os.Symlink(shared, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want error
	}{
		{fifo, nil}, // ENXIO: no reader
		{readFifo, taskprolog.ErrNotRegular},
		{os.DevNull, taskprolog.ErrNotRegular},
		{dir, nil},  // EISDIR
		{link, nil}, // ELOOP
	} {
		err := faulttest.NoHang(t, "AppendLog("+c.path+")", func() error { return taskprolog.AppendLog(c.path, uid, "x\n") })
		if err == nil || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("AppendLog(%s): %v, want an error (%v)", c.path, err, c.want)
		}
	}
	if data, _ := os.ReadFile(shared); string(data) != "line\nline\n" {
		t.Errorf("the link was followed: %q", data)
	}
	// Another user's per-user file (here: ours, claimed for uid+1).
	other := taskprolog.LogPath(perUser, uid+1)
	if err := os.WriteFile(other, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := taskprolog.AppendLog(perUser, uid+1, "x\n"); !errors.Is(err, taskprolog.ErrNotOwner) {
		t.Errorf("a per-user file of another user: %v, want ErrNotOwner", err)
	}
	// Root's per-user file planted by another user (as root: chown).
	if uid == 0 {
		rootFile := taskprolog.LogPath(perUser, 0)
		if err := os.Remove(rootFile); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(rootFile, nil, 0o666); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(rootFile, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if err := taskprolog.AppendLog(perUser, 0, "x\n"); !errors.Is(err, taskprolog.ErrNotOwner) {
			t.Errorf("root's per-user file owned by 65534: %v, want ErrNotOwner", err)
		}
	}
	var pe *fs.PathError
	if err := taskprolog.AppendLog(filepath.Join(dir, "no-dir", "x.log"), uid, "x\n"); !errors.As(err, &pe) {
		t.Errorf("missing directory: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
