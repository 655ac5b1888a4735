package launch

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// PyRecord is what one run of pyworker.py wrote.
type PyRecord struct {
	File    string            `json:"-"`
	Label   string            `json:"label"`
	PID     int               `json:"pid"`
	PPID    int               `json:"ppid"`
	PGID    int               `json:"pgid"`
	SID     int               `json:"sid"`
	Env     map[string]string `json:"env"`
	Signals map[string]int    `json:"signals"`
	// Exit is the status it exited with; nil while it runs (or when it
	// was killed).
	Exit *int `json:"exit"`
	// CommandStatus is the status of the command it ran first, if any.
	CommandStatus *int `json:"command_status"`
	// FailingWorkers is the all_reduce's sum in torchrun mode.
	FailingWorkers *int `json:"failing_workers"`
}

// ReadPy returns the records dir/<label>.<pid>.json, sorted by file name.
func ReadPy(dir, label string) ([]PyRecord, error) {
	files, err := filepath.Glob(filepath.Join(dir, label+".*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	recs := make([]PyRecord, 0, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var r PyRecord
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		r.File = f
		recs = append(recs, r)
	}
	return recs, nil
}

// WaitReady waits until n workers labelled label have said, in dir, that
// their signal handlers are installed (ready.<label>.<pid> files), or ctx
// ends.
func WaitReady(ctx context.Context, dir, label string, n int) error {
	for {
		files, _ := filepath.Glob(filepath.Join(dir, "ready."+label+".*"))
		if len(files) >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d %s workers ready in %s: %w", len(files), n, label, dir, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Ranks returns the value of variable name in each record, in order.
func Ranks(recs []PyRecord, name string) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Env[name]
	}
	return out
}

// Join writes the records' files on one line each, for failure messages.
func Join(recs []PyRecord) string {
	var b strings.Builder
	for _, r := range recs {
		j, _ := json.Marshal(r)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}
