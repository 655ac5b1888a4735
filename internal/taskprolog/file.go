package taskprolog

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/nemolens/lens-go/internal/bounded"
)

// ErrNotRegular: lens taskprolog opens only regular files where it expects
// a file; a FIFO, a device, a socket or a directory is refused at once,
// never waited for (docs/taskprolog.md#bounds). It is bounded.ErrNotRegular.
var ErrNotRegular = bounded.ErrNotRegular

// ErrNotOwner: a per-user log file (a log path with %u) that belongs to
// another user is refused, so that no user can read another's reports.
var ErrNotOwner = errors.New("belongs to another user")

// OpenRegular opens path for reading without ever blocking on it
// (bounded.Open): the open is non-blocking (a FIFO with no writer returns
// at once) and the file is refused with ErrNotRegular unless fstat says it
// is a regular file.
func OpenRegular(path string) (*os.File, error) { return bounded.Open(path) }

// checkRegular refuses f unless it is a regular file (and, for owner ≥ 0,
// one that belongs to owner).
func checkRegular(f *os.File, path string, owner int) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return bounded.NotRegular(path, fi.Mode())
	}
	if uid, ok := fileOwner(fi); ok && owner >= 0 && uid != owner {
		return &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (uid %d)", ErrNotOwner, uid)}
	}
	return nil
}

// LogPath returns the log file of the policy's log value for the user uid:
// every "%u" is replaced by the numeric user id (docs/taskprolog.md#reports).
func LogPath(value string, uid int) string {
	return strings.ReplaceAll(value, "%u", strconv.Itoa(uid))
}

// AppendLog appends text in one write (O_APPEND) to the log file the
// policy's log value names for the user uid (LogPath), never blocking on
// it and never following a symbolic link as its last component:
//
//   - with "%u" in value (one file per user): the file is created with
//     mode 0600 when it does not exist, and refused when it belongs to
//     another user;
//   - without: the file is opened when it exists (the admin creates it,
//     writable by every user), and created with mode 0644 otherwise.
//
// Anything but a regular file is refused with ErrNotRegular.
func AppendLog(value string, uid int, text string) error {
	path := LogPath(value, uid)
	perUser := strings.Contains(value, "%u")
	flags := os.O_WRONLY | os.O_APPEND | openFlags | noFollowFlags
	// Open an existing file without O_CREATE first: with
	// fs.protected_regular, O_CREATE on another user's file in a sticky,
	// world-writable directory fails even when its mode allows writing.
	f, err := os.OpenFile(path, flags, 0)
	if errors.Is(err, fs.ErrNotExist) {
		mode := fs.FileMode(0o644)
		if perUser {
			mode = 0o600
		}
		f, err = os.OpenFile(path, flags|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) { // another task of the user created it just now
			f, err = os.OpenFile(path, flags, 0)
		}
	}
	if err != nil {
		return err
	}
	owner := -1
	if perUser {
		owner = uid
	}
	if err := checkRegular(f, path, owner); err != nil {
		f.Close()
		return err
	}
	_, err = io.WriteString(f, text)
	return errors.Join(err, f.Close())
}
