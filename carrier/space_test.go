package carrier_test

// pythonSpace is the docs/compatibility.md#whitespace set, written out: the
// characters for which CPython's str.isspace() is true (and which
// str.strip() removes). internal/pytext implements it and tests it
// exhaustively; here it is the independent oracle of the fuzz tests, which
// check that Parse and Format trim keys with exactly this set.
var pythonSpace = []rune{
	0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x1F, 0x20, 0x85, 0xA0, 0x1680,
	0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A,
	0x2028, 0x2029, 0x202F, 0x205F, 0x3000,
}

// trimSeeds returns the texts the fuzz tests put around keys and values:
// each whitespace character, characters next to the set that are not
// whitespace, and bytes that are not UTF-8 (never trimmed), including
// truncated forms of U+0085 and U+3000 and a raw 0xA0 byte.
func trimSeeds() []string {
	seeds := []string{"", "\u200b", "\ufeff", "\u180e", "\x00", "\xff", "\xc2", "\xe3\x80", "\xa0", " \xff "}
	for _, r := range pythonSpace {
		seeds = append(seeds, string(r))
	}
	return seeds
}
