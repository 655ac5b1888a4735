package bounded

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular: a file that lens reads must be a regular file; a FIFO, a
// socket, a device or a directory is refused at once, never waited for.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge: the file is longer than what its reader takes.
var ErrTooLarge = errors.New("larger than lens reads")

// Open opens path for reading without ever blocking on it: the open is
// non-blocking (a FIFO without a writer returns at once) and does not make a
// terminal lens's controlling one, and the file is refused unless fstat says
// it is a regular file: a *fs.PathError naming path and wrapping
// ErrNotRegular with the file's kind ("not a regular file (a FIFO)").
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = NotRegular(path, fi.Mode())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// NotRegular is the error of a file of mode m at path where a regular
// file was expected.
func NotRegular(path string, m fs.FileMode) error {
	return &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, Kind(m))}
}

// ReadFile reads the regular file path ([Open]) whole, when it holds at
// most limit bytes; a longer one is a *fs.PathError wrapping ErrTooLarge,
// and nothing past limit+1 bytes is read.
func ReadFile(path string, limit int) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > limit {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w (more than %d bytes)", ErrTooLarge, limit)}
	}
	return data, nil
}

// Kind names the type of file of m: "a FIFO", "a socket", "a device", "a
// directory", "a symbolic link", else "mode " and m.
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "mode " + m.String()
}
