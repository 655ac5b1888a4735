package main

import (
	"strings"
	"testing"

	"github.com/nemolens/lens-go/carrier"
)

func TestCarrierParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, stdin, stdout, stderr string
	}{
		{"empty", "", "{}\n", ""},
		{"one newline stripped", "a=1\n", `{"a":"1"}` + "\n", ""},
		{"order and duplicates", "b=2,a=1,b=3", `{"b":"3","a":"1"}` + "\n", ""},
		{"escapes", "k=%22%5C%0A%09%01%E2%80%A8", `{"k":"\"\\\n\t\u0001\u2028"}` + "\n", ""},
		{"html is not escaped", "k=<&>", `{"k":"<&>"}` + "\n", ""},
		{"non-ASCII", "k=h%C3%A9llo,日本=語", `{"k":"héllo","日本":"語"}` + "\n", ""},
		{"invalid UTF-8", "k=\xff\xfe,\xc3=ok", `{"k":"\ufffd\ufffd","\ufffd":"ok"}` + "\n",
			"lens carrier parse: \"k\": not valid UTF-8; each invalid byte is written as \\ufffd\n" +
				"lens carrier parse: \"\\xc3\": not valid UTF-8; each invalid byte is written as \\ufffd\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runIn(t, nil, tc.stdin, "carrier", "parse")
			if r.code != 0 || r.stdout != tc.stdout || r.stderr != tc.stderr {
				t.Errorf("lens carrier parse < %q:\n%v\nwant stdout %q stderr %q", tc.stdin, r, tc.stdout, tc.stderr)
			}
		})
	}
}

func TestCarrierFormat(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, stdin, stdout string
		dropped             []string
	}{
		{"empty", "{}", "\n", nil},
		{"types", `{"s":"exp/1,seed=7","i":-42,"f":0.5,"e":1e16,"z":-0.0,"t":true,"n":null,"x":false}`,
			"s=exp%2F1%2Cseed%3D7,i=-42,f=0.5,e=1e%2B16,z=-0.0,t=True,x=False\n", nil},
		{"integer vs float literal", `{"a":1,"b":1.0,"c":1E2,"d":-0}`, "a=1,b=1.0,c=100.0,d=0\n", nil},
		{"outside int64", `{"big":123456789012345678901234,"neg":-9223372036854775809}`, "big=123456789012345678901234,neg=-9223372036854775809\n", nil},
		{"float overflow is inf", `{"a":1e400,"b":-1e400,"c":1e-400}`, "a=inf,b=-inf,c=0.0\n", nil},
		{"duplicate keys", `{"a":1,"b":2,"a":3}`, "a=3,b=2\n", nil},
		{"nested dropped", `{"a":[1,2],"b":{"c":[]},"d":"ok"}`, "d=ok\n", []string{"a", "b"}},
		{"nested then scalar", `{"a":[1],"b":1,"a":"x"}`, "a=x,b=1\n", nil},
		{"scalar then nested", `{"a":"x","b":1,"a":{}}`, "b=1\n", []string{"a"}},
		{"bad keys", `{"bad,key":"v","bad=key":"v","  ":"v","good":3}`, "good=3\n", []string{"bad,key", "bad=key", "  "}},
		{"trimmed keys collide", `{"a":1," a ":2}`, "a=2\n", nil},
		{"whitespace around", " \n{\"a\":\"\"}\n\n", "a=\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runIn(t, nil, tc.stdin, "carrier", "format")
			if r.code != 0 || r.stdout != tc.stdout {
				t.Errorf("lens carrier format < %s:\n%v\nwant stdout %q", tc.stdin, r, tc.stdout)
			}
			got := droppedKeys(t, r.stderr)
			if strings.Join(got, "|") != strings.Join(tc.dropped, "|") {
				t.Errorf("dropped %q, want %q", got, tc.dropped)
			}
		})
	}
}

// TestCarrierFormatDroppedReasons pins the reason printed for each kind of
// dropped entry: a key that holds NUL has a reason of its own.
func TestCarrierFormatDroppedReasons(t *testing.T) {
	t.Parallel()
	stdin := `{"a\u0000b":"v","bad,key":"v","  ":"v","\u0000,":"v","k":[1],"good":3}`
	const sep = "the key cannot be carried (it is empty after trimming or holds ',' or '=')\n"
	want := `lens carrier format: dropped "a\x00b": the key cannot be carried (it holds NUL, which no environment variable can hold)` + "\n" +
		`lens carrier format: dropped "bad,key": ` + sep +
		`lens carrier format: dropped "  ": ` + sep +
		`lens carrier format: dropped "\x00,": ` + sep +
		`lens carrier format: dropped "k": the value is a JSON array; only strings, numbers, booleans and null can be carried` + "\n"
	r := runIn(t, nil, stdin, "carrier", "format")
	if r.code != 0 || r.stdout != "good=3\n" || r.stderr != want {
		t.Errorf("lens carrier format < %s:\n%v\nwant stdout %q, stderr\n%s", stdin, r, "good=3\n", want)
	}
}

func TestCarrierExtend(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, stdin, defaults, overrides, stdout string
		dropped                                  []string
	}{
		{"spec example", "a=1,b=2", `{"b":"9","c":"3"}`, `{"a":""}`, "b=2,c=3,a=\n", nil},
		{"flags omitted", "x=%2f\n", "", "", "x=%2F\n", nil},
		{"null hides", "run.id=current,launcher.id=abc", "", `{"run.id":"","launcher.id":null}`, "run.id=\n", nil},
		{"default array loses to the carrier", "a=1", `{"a":[1],"b":{}}`, "", "a=1\n", []string{"b"}},
		{"override object wins", "a=1,b=2", "", `{"a":{"x":1}}`, "b=2\n", []string{"a"}},
		{"typed values", "", `{"nv.dl.rank":5}`, `{"nv.dl.role":"worker","f":2.5,"ok":true}`, "nv.dl.rank=5,nv.dl.role=worker,f=2.5,ok=True\n", nil},
		{"bad key in the carrier survives as a key", "a b=1", "", `{"c,d":"x"}`, "a b=1\n", []string{"c,d"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := []string{"carrier", "extend"}
			if tc.defaults != "" {
				args = append(args, "--defaults", tc.defaults)
			}
			if tc.overrides != "" {
				args = append(args, "--overrides", tc.overrides)
			}
			r := runIn(t, nil, tc.stdin, args...)
			if r.code != 0 || r.stdout != tc.stdout {
				t.Errorf("lens %q < %q:\n%v\nwant stdout %q", args, tc.stdin, r, tc.stdout)
			}
			got := droppedKeys(t, r.stderr)
			if strings.Join(got, "|") != strings.Join(tc.dropped, "|") {
				t.Errorf("dropped %q, want %q", got, tc.dropped)
			}
		})
	}
}

func TestCarrierCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		code  int
		out   string
	}{
		{"clean", "a=1,b=2\n", nil, 0, ""},
		{"empty", "", nil, 0, ""},
		{"blank segments are fine", "a=1,, ,\n", nil, 0, ""},
		{"spec example", "slurm.job.id=1,slurm.job.id=,slurm.nodelist=node-[1-4]",
			[]string{"--require", "slurm.job.id,slurm.array.job_id", "--forbid", "slurm.nodelist"}, 1,
			`duplicate key "slurm.job.id"` + "\n" + `missing key "slurm.array.job_id"` + "\n" +
				`empty key "slurm.job.id"` + "\n" + `forbidden key "slurm.nodelist"` + "\n"},
		{"malformed", "novalue,=v,a=1", nil, 1, `malformed segment "novalue"` + "\n" + `malformed segment "=v"` + "\n"},
		{"required present", "a=1,b=x", []string{"--require", "a, b", "--require", "a"}, 0, ""},
		{"exactly one newline stripped", "x\n\n", nil, 1, `malformed segment "x\n"` + "\n"},
		{"one newline stripped", "x\n", nil, 1, `malformed segment "x"` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runIn(t, nil, tc.stdin, append([]string{"carrier", "check"}, tc.args...)...)
			if r.code != tc.code || r.stdout != tc.out || r.stderr != "" {
				t.Errorf("lens carrier check %q < %q:\n%v\nwant exit %d, stdout %q", tc.args, tc.stdin, r, tc.code, tc.out)
			}
		})
	}
}

// TestCarrierBinary runs the carrier commands through the binary once each,
// stdin given as raw bytes.
func TestCarrierBinary(t *testing.T) {
	t.Parallel()
	raw := "odd=%2Fpre%2Dencoded, malformed ,k=\xff"
	if r := runBin(t, nil, raw, "carrier", "extend", "--overrides", `{"slurm.job.id":"12345"}`); r.code != 0 ||
		r.stdout != "odd=%2Fpre-encoded,slurm.job.id=12345\n" ||
		r.stderr != "lens carrier extend: dropped \"k\": the value is not valid UTF-8\n" {
		t.Errorf("lens carrier extend: %v", r)
	}
	want, _ := carrier.Extend(raw, nil, nil)
	if r := runBin(t, nil, raw+"\n", "carrier", "extend"); r.stdout != want+"\n" {
		t.Errorf("lens carrier extend: %v, want %q", r, want)
	}
	if r := runBin(t, nil, raw, "carrier", "check"); r.code != 1 || r.stdout != "malformed segment \" malformed \"\n" {
		t.Errorf("lens carrier check: %v", r)
	}
}
