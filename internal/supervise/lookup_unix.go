//go:build unix

package supervise

import (
	"errors"
	"os"
	"strings"
	"syscall"
)

// DefaultPath is the search path of execvp(3) when PATH is unset: the C
// library's confstr(_CS_PATH).
const DefaultPath = "/bin:/usr/bin"

// shell runs a file that the kernel cannot execute (ENOEXEC: no "#!"), as
// execvp(3) does.
const shell = "/bin/sh"

// lookupPath returns PATH from env, or DefaultPath when env has none.
func lookupPath(env []string) string {
	path, found := "", false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path, found = v, true // the last one wins, as getenv(3) finds it in execve's copy
		}
	}
	if !found {
		return DefaultPath
	}
	return path
}

// Candidates returns the files execvp(3) tries for name with the search
// path path, in order: name itself when it holds a slash, else each PATH
// entry joined with name, an empty entry meaning the current directory
// (name alone) and relative entries staying relative.
func Candidates(name, path string) []string {
	if strings.Contains(name, "/") {
		return []string{name}
	}
	var out []string
	for dir := range strings.SplitSeq(path, ":") {
		if dir == "" {
			out = append(out, name)
		} else {
			out = append(out, strings.TrimSuffix(dir, "/")+"/"+name)
		}
	}
	return out
}

// startFunc starts one file; it is os.StartProcess in the process.
type startFunc func(file string, argv []string) (*os.Process, error)

// lookupStart starts args as execvp(3) would: each candidate in turn; a
// file the kernel cannot execute (ENOEXEC) is run by /bin/sh; EACCES is
// remembered and the search goes on, as do ENOENT, ESTALE, ENOTDIR, ENODEV
// and ETIMEDOUT; any other error ends it. It returns the started process
// and the file run.
func lookupStart(args []string, env []string, start startFunc) (*os.Process, string, error) {
	name := args[0]
	searched := !strings.Contains(name, "/")
	if name == "" {
		return nil, "", &StartError{Name: name, Searched: searched, Err: syscall.ENOENT}
	}
	eacces := false
	for _, file := range Candidates(name, lookupPath(env)) {
		// What execve would refuse with ENOENT, ENOTDIR or EACCES is
		// skipped without a fork.
		switch fi, err := os.Stat(file); {
		case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ENOTDIR):
			continue
		case errors.Is(err, syscall.EACCES), err == nil && fi.IsDir():
			eacces = true
			continue
		}
		p, err := start(file, args)
		if errors.Is(err, syscall.ENOEXEC) {
			script := file
			file = shell
			p, err = start(shell, append([]string{shell, script}, args[1:]...))
			if err != nil {
				// execvp reports the shell's failure as is.
				return nil, "", &StartError{Name: name, Searched: searched, Err: err}
			}
		}
		if err == nil {
			return p, file, nil
		}
		var errno syscall.Errno
		if !errors.As(err, &errno) {
			return nil, "", &StartError{Name: name, Searched: searched, Err: err}
		}
		switch errno {
		case syscall.EACCES:
			eacces = true
		case syscall.ENOENT, syscall.ESTALE, syscall.ENOTDIR, syscall.ENODEV, syscall.ETIMEDOUT:
		default:
			return nil, "", &StartError{Name: name, Searched: searched, Err: err}
		}
	}
	// Nothing could be run: EACCES when something was found, else ENOENT.
	err := syscall.ENOENT
	if eacces {
		err = syscall.EACCES
	}
	return nil, "", &StartError{Name: name, Searched: searched, Err: err}
}
