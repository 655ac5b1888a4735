package detect

import "github.com/nemolens/lens-go/attr"

// isUnset reports whether merge ignores v: null or the empty string.
func isUnset(v attr.Value) bool {
	return v.IsNull() || (v.Kind() == attr.KindString && v.AsString() == "")
}

// merge is the reference's merge_resource_attributes(base, additions,
// overwrite) (docs/compatibility.md#merge): start from base without its null and "" entries;
// then, for each entry of additions that is neither null nor "", set it when
// overwrite is true or the key is not yet present. The result is a new map:
// base's surviving keys in base's order, then new keys of additions in
// additions' order. Neither input is modified. detect_slurm uses it with
// overwrite=false. (The newest reference inlines this logic; the port keeps
// it as one function with exactly these semantics.)
func merge(base, additions *attr.Map, overwrite bool) *attr.Map {
	out := attr.WithCapacity(base.Len() + additions.Len())
	mergeInto(out, base.Entries(), additions.Entries(), overwrite)
	return out
}

// mergeInto appends merge(base, additions, overwrite) to dst; base and
// additions are ordered entries. dst must not
// hold any key of base or additions beforehand (detection appends the Slurm
// keys after the local ones, which are disjoint), so the result equals
// appending merge's result.
func mergeInto(dst *attr.Map, base, additions []attr.Entry, overwrite bool) {
	for _, e := range base {
		if !isUnset(e.Value) {
			dst.Set(e.Key, e.Value)
		}
	}
	for _, e := range additions {
		if isUnset(e.Value) {
			continue
		}
		if overwrite {
			dst.Set(e.Key, e.Value)
		} else {
			dst.SetDefault(e.Key, e.Value)
		}
	}
}
