package otelcol

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const line1 = `{"resourceLogs":[{"resource":{"attributes":[{"key":"nemo.run.id","value":{"stringValue":"r1"}},{"key":"nv.dl.rank","value":{"intValue":"3"}}]},"scopeLogs":[{"scope":{"name":"s"},"logRecords":[{"severityText":"INFO","body":{"stringValue":"hello"},"attributes":[{"key":"steps","value":{"intValue":"5"}}]}]}]}]}`

const line2 = `{"resourceLogs":[{"resource":{"attributes":[{"key":"nemo.run.id","value":{"stringValue":"r2"}}]},"scopeLogs":[{"logRecords":[{"body":{"stringValue":"a"}},{"body":{"boolValue":true}}]}]}]}`

func TestRecords(t *testing.T) {
	cases := []struct {
		name, content string
		want          []string // "run|body|rank|steps" per record
		wantErr       string
	}{
		{"missing file", "", nil, ""},
		{"two lines", line1 + "\n" + line2 + "\n", []string{"string:r1|string:hello|int:3|int:5", "string:r2|string:a|other|other", "string:r2|bool:true|other|other"}, ""},
		{"partial last line is left for later", line1 + "\n" + line2[:40], []string{"string:r1|string:hello|int:3|int:5"}, ""},
		{"broken complete line", line1 + "\n{broken}\n", nil, "line 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "logs.jsonl")
			if c.content != "" {
				if err := os.WriteFile(file, []byte(c.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			recs, err := (&Collector{file: file}).Records()
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), file) {
					t.Fatalf("err = %v, want one naming %s and %q", err, file, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range recs {
				got = append(got, strings.Join([]string{r.Resource["nemo.run.id"].Typed(), r.Body.Typed(),
					r.Resource["nv.dl.rank"].Typed(), r.Attributes["steps"].Typed()}, "|"))
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("records\n  %q\nwant\n  %q", got, c.want)
			}
		})
	}
}
