package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nemolens/lens-go/carrier"
	"github.com/nemolens/lens-go/internal/scalegen"
)

// The inputs of the size table. Value sizes are those of the decoded value
// (escaped shape: the carrier text is about a third longer); segments and
// duplicate keys have 10-byte escaped values.
var inputNames = []string{
	"launcher=516B",    // the launcher's carrier of a typical job (scalegen.LauncherCarrier)
	"value=1MiB",       // one entry whose value has 1 MiB
	"value=16MiB",      // one entry of 16 MiB
	"value=64MiB",      // one entry of 64 MiB
	"segments=100000",  // 100,000 entries
	"segments=1000000", // 1,000,000 entries (33 MB of text)
	"dupkeys=10000",    // 10,000 keys, each twice (20,000 segments)
	"env=128KiB",       // the largest carrier a child can receive: 131,046 bytes of short keys
}

// inputDescriptions say what each input is, for the report.
var inputDescriptions = map[string]string{
	"launcher=516B":    "the launcher's carrier of a typical job: 19 entries",
	"value=1MiB":       "one entry, 1 MiB escaped value",
	"value=16MiB":      "one entry, 16 MiB escaped value",
	"value=64MiB":      "one entry, 64 MiB escaped value",
	"segments=100000":  "100,000 entries of 10 B",
	"segments=1000000": "1,000,000 entries of 10 B",
	"dupkeys=10000":    "10,000 keys, each twice",
	"env=128KiB":       "131,046 B of short keys (18,911 entries): the largest carrier a child can receive",
}

// inputText returns the carrier text of an input.
func inputText(name string) (string, error) {
	switch name {
	case "launcher=516B":
		return scalegen.LauncherCarrier, nil
	case "value=1MiB":
		return scalegen.Text(1, 1<<20, scalegen.Escaped), nil
	case "value=16MiB":
		return scalegen.Text(1, 16<<20, scalegen.Escaped), nil
	case "value=64MiB":
		return scalegen.Text(1, 64<<20, scalegen.Escaped), nil
	case "segments=100000":
		return scalegen.Text(100_000, 10, scalegen.Escaped), nil
	case "segments=1000000":
		return scalegen.Text(1_000_000, 10, scalegen.Escaped), nil
	case "dupkeys=10000":
		return scalegen.DuplicateKeys(10_000), nil
	case "env=128KiB":
		return scalegen.FullEnvCarrier(), nil
	}
	return "", fmt.Errorf("unknown input %q (want one of %s)", name, strings.Join(inputNames, ", "))
}

// inputJSON returns the JSON object `lens carrier format` reads for a
// carrier text: one member per segment, in order (a repeated key is a
// repeated member), the value decoded.
func inputJSON(text string) []byte {
	b := make([]byte, 0, len(text)+len(text)/4)
	b = append(b, '{')
	first := true
	for seg := range strings.SplitSeq(text, ",") {
		k, v, ok := strings.Cut(seg, "=")
		if !ok {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		kj, _ := json.Marshal(k)
		vj, _ := json.Marshal(carrier.Decode(v))
		b = append(b, kj...)
		b = append(b, ':')
		b = append(b, vj...)
	}
	return append(b, '}', '\n')
}
