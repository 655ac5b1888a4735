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
	return []string{"-j", job, "-D", "-P", "--delimiter=" + Delimiter, "-n", "-o", f}
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
	if err := OfJob(rows, job); err != nil {
		return nil, err
	}
	return Group(rows)
}

// ErrOtherJob is wrapped when sacct returns rows of a job that was not
// asked for (a site wrapper that ignores -j).
var ErrOtherJob = errors.New("rows of another job")

// OfJob checks that every row belongs to job ("N" or "N_T", see
// [ValidJobArg]): its JobID or JobIDRaw, without the step, is job, or, for
// an array job id N, its JobID is a task N_T. It reports every other row
// (errors.Join of errors wrapping ErrOtherJob).
func OfJob(rows []Row, job string) error {
	var errs []error
	for _, r := range rows {
		id := rawJob(r.JobID)
		if id == job || rawJob(r.JobIDRaw) == job || !strings.Contains(job, "_") && strings.HasPrefix(id, job+"_") {
			continue
		}
		errs = append(errs, fmt.Errorf("sacct output line %d: %s is not job %s: %w", r.Line, r.JobID, job, ErrOtherJob))
	}
	return errors.Join(errs...)
}
