package reckon

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Runner runs sacct with args and returns its standard output. lens reckon
// runs the sacct found in PATH with TZ=UTC and SLURM_TIME_FORMAT=standard
// (docs/reckoner.md#fields); tests inject recorded output.
type Runner func(ctx context.Context, args ...string) ([]byte, error)

// ErrSacct is wrapped when sacct fails.
var ErrSacct = errors.New("sacct failed")

// Args returns sacct's arguments for job (docs/reckoner.md#fields).
func Args(job string, withSLUID bool) []string {
	f := strings.Join(Fields, ",")
	if withSLUID {
		f += "," + SLUIDField
	}
	return []string{"-j", job, "-D", "-P", "-n", "-o", f}
}

// HasSLUID reports whether `sacct --helpformat` output lists the SLUID field.
func HasSLUID(helpformat string) bool {
	for _, f := range strings.Fields(helpformat) {
		if strings.EqualFold(f, SLUIDField) {
			return true
		}
	}
	return false
}

// Read asks sacct for job's records, every attempt (-D), and groups them
// (see [Group]). The SLUID is read where `sacct --helpformat` lists it.
func Read(ctx context.Context, run Runner, job string) ([]Job, error) {
	help, err := run(ctx, "--helpformat")
	if err != nil {
		return nil, fmt.Errorf("%w: sacct --helpformat: %w", ErrSacct, err)
	}
	withSLUID := HasSLUID(string(help))
	out, err := run(ctx, Args(job, withSLUID)...)
	if err != nil {
		return nil, fmt.Errorf("%w: sacct %s: %w", ErrSacct, strings.Join(Args(job, withSLUID), " "), err)
	}
	rows, err := Parse(string(out), withSLUID)
	if err != nil {
		return nil, err
	}
	return Group(rows)
}
