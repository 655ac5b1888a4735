package slurm

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/nemolens/lens-go/attr"
)

// The helpers below are shared by the two programs the end-to-end tests run
// (e2e/cmd/probe and e2e/cmd/worker) and by the tests that read their
// records back.

// EncodeAttrs turns an attribute map into ordered, typed JSON entries. A
// float that JSON cannot hold (NaN, ±Inf) is recorded as null.
func EncodeAttrs(m *attr.Map) []Attr {
	out := []Attr{}
	for k, v := range m.All() {
		a := Attr{Key: k, Kind: v.Kind().String()}
		var raw []byte
		var err error
		switch v.Kind() {
		case attr.KindString:
			raw, err = json.Marshal(v.AsString())
		case attr.KindBool:
			raw, err = json.Marshal(v.AsBool())
		case attr.KindInt64:
			raw = strconv.AppendInt(nil, v.AsInt64(), 10)
		case attr.KindFloat64:
			raw, err = json.Marshal(v.AsFloat64())
		}
		if raw == nil || err != nil {
			raw = []byte("null")
		}
		a.Value = raw
		out = append(out, a)
	}
	return out
}

// WriteJSON stores v as indented JSON in dir/name, atomically (write a
// temporary file, then rename), so readers never see a partial file.
func WriteJSON(dir, name string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".record-*.tmp")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// ReadJSON decodes the files dir/<label>.*.json, sorted by file name, and
// passes each file's path to setFile with its decoded value.
func ReadJSON[T any](dir, label string, setFile func(*T, string)) ([]T, error) {
	files, err := filepath.Glob(filepath.Join(dir, unsafeName.ReplaceAllString(label, "_")+".*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	out := make([]T, 0, len(files))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var r T
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		setFile(&r, f)
		out = append(out, r)
	}
	return out, nil
}
