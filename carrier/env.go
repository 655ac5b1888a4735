package carrier

import (
	"github.com/nemolens/lens-go/attr"
	"github.com/nemolens/lens-go/environ"
)

// Get parses the carrier of env (nil: the process environment), read at call
// time. An absent variable gives an empty map. Values are strings; no type
// reconstruction happens here.
func Get(env environ.Lookuper) *attr.Map {
	v, _ := environ.Or(env).LookupEnv(EnvVar)
	return Parse(v)
}
