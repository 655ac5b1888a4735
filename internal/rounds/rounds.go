package rounds

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/nemolens/lens-go/environ"
	"github.com/nemolens/lens-go/internal/traceid"
)

// Limits of a record (docs/tracing.md#round-links).
const (
	// MaxRounds is the number of rounds a record keeps, the newest ones.
	MaxRounds = 64
	// maxSize bounds what Note reads: a longer file is not a record.
	maxSize = len(header) + MaxRounds*(uuidLen+1)
	header  = "nemo.lens.rounds/1\n"
	uuidLen = 36
)

// Errors of [Note], wrapped with the path they concern.
var (
	// ErrUnsafe: the directory or the record is not a plain directory or
	// file owned by the user and closed to others.
	ErrUnsafe = errors.New("not owned by the user or open to others")
	// ErrRound: the current round is not a canonical UUID.
	ErrRound = errors.New("round is not a canonical lowercase UUID")
)

// ParseError is a record file that is not one ([Parse]).
type ParseError struct {
	Line   int // 1-based; 0: the whole file
	Reason string
}

func (e *ParseError) Error() string {
	if e.Line == 0 {
		return "rounds record: " + e.Reason
	}
	return "rounds record line " + strconv.Itoa(e.Line) + ": " + e.Reason
}

// Dir returns the directory of the records of the user uid
// (docs/tracing.md#round-links): "nemo-lens" under XDG_RUNTIME_DIR when it
// is an absolute path and not a directory of another user (the user's own
// runtime directory), else "nemo-lens-<uid>" under TMPDIR when it is an absolute
// path, else under /tmp (os.TempDir's rule on Unix, read from env). A
// runtime directory of another user (root started with a user's
// environment, `sudo -E`) is left alone: a record directory made there
// would belong to root, and the user's own processes could then neither use
// it nor remove it.
func Dir(env environ.Lookuper, uid int) string {
	env = environ.Or(env)
	if d, _ := env.LookupEnv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) && !othersDir(d, uid) {
		return filepath.Join(d, "nemo-lens")
	}
	base := "/tmp"
	if d, _ := env.LookupEnv("TMPDIR"); filepath.IsAbs(d) {
		base = d
	}
	return filepath.Join(base, "nemo-lens-"+strconv.Itoa(uid))
}

// File returns the name of the record of key under dir: "rounds-" and the
// first 32 hexadecimal digits of SHA-256 of key.
func File(dir, key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(dir, "rounds-"+hex.EncodeToString(sum[:16]))
}

// Parse reads a record: the header line, then one round a line (a
// canonical lowercase UUID), oldest first, at most MaxRounds, no round
// twice.
func Parse(b []byte) ([]string, error) {
	if len(b) > maxSize {
		return nil, &ParseError{Reason: "longer than " + strconv.Itoa(maxSize) + " bytes"}
	}
	rest, ok := bytes.CutPrefix(b, []byte(header))
	if !ok {
		return nil, &ParseError{Line: 1, Reason: fmt.Sprintf("want %q", strings.TrimSuffix(header, "\n"))}
	}
	var rounds []string
	for n := 2; len(rest) > 0; n++ {
		line, after, ok := bytes.Cut(rest, []byte("\n"))
		if !ok {
			return nil, &ParseError{Line: n, Reason: "no newline at the end"}
		}
		r := string(line)
		if !canonicalUUID(r) {
			return nil, &ParseError{Line: n, Reason: fmt.Sprintf("%q is not a canonical lowercase UUID", r)}
		}
		if slices.Contains(rounds, r) {
			return nil, &ParseError{Line: n, Reason: r + " twice"}
		}
		if len(rounds) == MaxRounds {
			return nil, &ParseError{Line: n, Reason: "more than " + strconv.Itoa(MaxRounds) + " rounds"}
		}
		rounds = append(rounds, r)
		rest = after
	}
	return rounds, nil
}

// Format writes rounds as a record ([Parse] reads it back), keeping the
// newest MaxRounds.
func Format(rounds []string) []byte {
	if len(rounds) > MaxRounds {
		rounds = rounds[len(rounds)-MaxRounds:]
	}
	b := []byte(header)
	for _, r := range rounds {
		b = append(append(b, r...), '\n')
	}
	return b
}

// Previous returns the round recorded before current in rounds when
// current is among them, else the newest recorded round (the round before a
// new one), and whether current must be added.
func Previous(rounds []string, current string) (previous string, ok, add bool) {
	if i := slices.Index(rounds, current); i >= 0 {
		if i == 0 {
			return "", false, false
		}
		return rounds[i-1], true, false
	}
	if len(rounds) == 0 {
		return "", false, true
	}
	return rounds[len(rounds)-1], true, true
}

// Note records current (the attempt UUID of the process's round) in the
// record of key under dir and returns the round before it on this node:
// the one recorded before current when a process of the same round
// recorded it already, else the newest recorded one. ok is false when
// there is none: the first round, or a record that cannot be used. dir is
// created (mode 0700) when missing; it and the record must belong to the
// user and be closed to others. A record that is not one ([Parse]) is
// replaced. The record is replaced atomically (a temporary file renamed),
// so a reader sees it whole. The error says what could not be read or
// written; previous and ok are still what could be told.
func Note(dir, key, current string) (previous string, ok bool, err error) {
	if !canonicalUUID(current) {
		return "", false, fmt.Errorf("%q: %w", current, ErrRound)
	}
	if err := ownDir(dir); err != nil {
		return "", false, err
	}
	path := File(dir, key)
	rounds, readErr := read(path)
	if errors.Is(readErr, ErrUnsafe) {
		return "", false, readErr
	}
	previous, ok, add := Previous(rounds, current)
	if !add {
		return previous, ok, readErr
	}
	return previous, ok, errors.Join(readErr, write(dir, path, Format(append(rounds, current))))
}

// ownDir makes dir when missing and checks it is the user's own.
func ownDir(dir string) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("rounds directory %q: not an absolute path", dir)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() || !private(fi) {
		return fmt.Errorf("rounds directory %s: %w", dir, ErrUnsafe)
	}
	return nil
}

// read returns the rounds of the record at path: none when there is no
// record, or when it is not one (a *ParseError, wrapped).
func read(path string) ([]string, error) {
	f, err := openNoFollow(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || !private(fi) {
		return nil, fmt.Errorf("rounds record %s: %w", path, ErrUnsafe)
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(maxSize)+1))
	if err != nil {
		return nil, err
	}
	rounds, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rounds, nil
}

// write replaces the record at path with b, atomically.
func write(dir, path string, b []byte) error {
	f, err := os.CreateTemp(dir, ".rounds-*") // mode 0600
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// canonicalUUID reports whether s is a UUID in canonical lowercase form
// that names a trace ([traceid.FromUUID], which also refuses the nil UUID).
func canonicalUUID(s string) bool {
	tid, err := traceid.FromUUID(s)
	return err == nil && traceid.UUID(tid) == s
}
