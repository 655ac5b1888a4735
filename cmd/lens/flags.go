package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/internal/pytext"
	"github.com/nemolens/lens-go/lensconv"
)

// choice is a string flag restricted to a set of values.
type choice struct {
	value   string
	allowed []string
}

func (c *choice) String() string { return c.value }

func (c *choice) Set(s string) error {
	if !slices.Contains(c.allowed, s) {
		return fmt.Errorf("must be one of %s", strings.Join(c.allowed, ", "))
	}
	c.value = s
	return nil
}

func choiceFlag(fs *flag.FlagSet, name, def, usage string, allowed ...string) *choice {
	c := &choice{value: def, allowed: allowed}
	fs.Var(c, name, usage)
	return c
}

// attrList is the repeatable --attr KEY=VALUE flag. Values are strings; a
// repeated key keeps its first position and takes the last value.
type attrList struct{ m *attr.Map }

func (l *attrList) String() string {
	if l == nil || l.m.Len() == 0 {
		return ""
	}
	return l.m.String()
}

// Repeatable marks the flag as repeatable in the synopsis.
func (l *attrList) Repeatable() bool { return true }

func (l *attrList) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want KEY=VALUE")
	}
	if err := checkRankValue(k, v); err != nil {
		return err
	}
	if l.m == nil {
		l.m = &attr.Map{}
	}
	l.m.SetString(k, v)
	return nil
}

// keyList is a comma-separated list of keys (--require, --forbid); the flag
// may be repeated and the lists are joined. Empty items are ignored.
type keyList []string

func (l *keyList) String() string { return strings.Join(*l, ",") }

// Repeatable marks the flag as repeatable in the synopsis.
func (l *keyList) Repeatable() bool { return true }

func (l *keyList) Set(s string) error {
	for k := range strings.SplitSeq(s, ",") {
		if k = pytext.TrimSpace(k); k != "" {
			*l = append(*l, k)
		}
	}
	return nil
}

// checkRankValue refuses a value of nv.dl.rank, nv.dl.local_rank or
// nv.dl.world_size that cannot be one: the instance id would be built from
// it ("…-rankabc"). A rank is a decimal integer 0 or more, a world size 1 or
// more (docs/cli.md#lens-exec).
func checkRankValue(key, value string) error {
	least := int64(0)
	switch key {
	case lensconv.NVDLRank, lensconv.NVDLLocalRank:
	case lensconv.NVDLWorldSize:
		least = 1
	default:
		return nil
	}
	if n, err := pytext.ParseInt(value); err != nil || n < least {
		return fmt.Errorf("%s must be a decimal integer, %d or more", key, least)
	}
	return nil
}
