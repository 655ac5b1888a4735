// Package shellquote quotes strings for POSIX shells (sh, bash, zsh, dash),
// byte for byte as Python's shlex.quote does, so that the lens command's
// "lens env" prints the same export line as the reference's
// "nemo-lens set-slurm-resource-attrs" (docs/compatibility.md#shell-quoting).
//
// The package reads no environment variables and emits no attributes.
package shellquote
