package modelfile

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/sbinet/npyio/npy"
)

// HeaderVariant is a model file whose JSON header has one numeric field
// changed: Path names the field (keys and indices joined by dots).
type HeaderVariant struct {
	Path  string
	Value float64
	File  []byte
}

// HeaderVariants returns, for a model file raw, the files with one
// integer header field (a size, a count, a version: what a loader must
// check against the arrays) replaced by each of 0, −1, v − 1, v + 1, 2v
// and 2²⁵ (past the loaders' caps), for the tests of every loader: each
// variant must be refused or load to a model that behaves like the
// original. The kernel's fields, and the fields named in skip, are left
// alone (they are the model: a loader cannot tell a changed σ or degree
// from a saved one).
func HeaderVariants(raw []byte, skip ...string) ([]HeaderVariant, error) {
	head, err := headerOf(raw)
	if err != nil {
		return nil, err
	}
	var paths []string
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(join(prefix, k), x[k])
			}
		case []any:
			for i, e := range x {
				walk(join(prefix, fmt.Sprint(i)), e)
			}
		case float64:
			skipped := false
			for _, seg := range splitPath(prefix) {
				skipped = skipped || seg == "kernel" // a kernel's fields, anywhere
			}
			for _, sk := range skip {
				skipped = skipped || prefix == sk
			}
			if x == float64(int64(x)) && !skipped {
				paths = append(paths, prefix)
			}
		}
	}
	walk("", head)
	var out []HeaderVariant
	for _, p := range paths {
		v := get(head, p)
		for _, nv := range []float64{0, -1, v - 1, v + 1, 2 * v, 1 << 25} {
			if nv == v {
				continue
			}
			h, _ := headerOf(raw) // a fresh copy
			set(h, p, nv)
			file, err := withHeader(raw, h)
			if err != nil {
				return nil, err
			}
			out = append(out, HeaderVariant{Path: p, Value: nv, File: file})
		}
	}
	return out, nil
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

func step(v any, k string) any {
	switch x := v.(type) {
	case map[string]any:
		return x[k]
	case []any:
		var i int
		fmt.Sscan(k, &i)
		return x[i]
	}
	return nil
}

func get(v any, path string) float64 {
	for _, k := range splitPath(path) {
		v = step(v, k)
	}
	f, _ := v.(float64)
	return f
}

func set(v any, path string, nv float64) {
	keys := splitPath(path)
	for _, k := range keys[:len(keys)-1] {
		v = step(v, k)
	}
	last := keys[len(keys)-1]
	switch x := v.(type) {
	case map[string]any:
		x[last] = nv
	case []any:
		var i int
		fmt.Sscan(last, &i)
		x[i] = nv
	}
}

func splitPath(p string) []string {
	var out []string
	start := 0
	for i := 0; i < len(p); i++ {
		if p[i] == '.' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return append(out, p[start:])
}

// headerOf decodes the JSON header of a model file.
func headerOf(raw []byte) (any, error) {
	z, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		return nil, err
	}
	for _, f := range z.File {
		if f.Name != "header.npy" {
			continue
		}
		r, err := f.Open()
		if err != nil {
			return nil, err
		}
		defer r.Close()
		var head []uint8
		if err := npy.Read(r, &head); err != nil {
			return nil, err
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(head))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		return numbersToFloats(v), nil
	}
	return nil, fmt.Errorf("modelfile: no header.npy")
}

func numbersToFloats(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = numbersToFloats(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbersToFloats(e)
		}
	case json.Number:
		f, _ := x.Float64()
		return f
	}
	return v
}

// withHeader returns raw with its header.npy replaced by head, every other
// member copied as it is.
func withHeader(raw []byte, head any) ([]byte, error) {
	z, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		return nil, err
	}
	text, err := json.Marshal(head)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, f := range z.File {
		if f.Name != "header.npy" {
			if err := w.Copy(f); err != nil {
				return nil, err
			}
			continue
		}
		fw, err := w.Create(f.Name)
		if err != nil {
			return nil, err
		}
		if err := npy.Write(fw, []uint8(text)); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// EditHeader returns the model file raw with its JSON header changed by
// edit (which gets the decoded header object, numbers as float64), every
// other member copied as it is: for tests of how loaders read headers
// written by other versions.
func EditHeader(raw []byte, edit func(head map[string]any)) ([]byte, error) {
	head, err := headerOf(raw)
	if err != nil {
		return nil, err
	}
	obj, ok := head.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("modelfile: the header is not a JSON object")
	}
	edit(obj)
	return withHeader(raw, obj)
}
