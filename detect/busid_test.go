package detect

import "testing"

// TestBusIDDomainUpperCase: the PCI bus id is written in NVML's form,
// every hexadecimal digit upper case, the domain's too (break: the
// domain's %08X as %08x; every fixture's domain is 0000, whose case does
// not show).
func TestBusIDDomainUpperCase(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"0000abcd:3b:0a.1", "0000ABCD:3B:0A.1"},
		{"dead:be:1f.7", "0000DEAD:BE:1F.7"},
		{"0000000F:81:00.0", "0000000F:81:00.0"},
	} {
		bus, ok := parseBusID(c.in)
		if !ok {
			t.Fatalf("parseBusID(%q) refused", c.in)
		}
		if got := formatBusID(bus); got != c.want {
			t.Errorf("%q: formatBusID = %q, want %q", c.in, got, c.want)
		}
	}
}
