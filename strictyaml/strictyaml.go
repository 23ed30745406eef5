// Package strictyaml decodes YAML into Go values and refuses what
// go.yaml.in/yaml/v3 lets through: an unknown field (the decoder's
// KnownFields), a second document in the stream, an empty stream, and a
// number that its field cannot hold exactly (1.9 or 2.5 into an integer
// field is truncated by yaml.v3, 2^64 into an int64 or uint64 field
// wraps, a negative number into an unsigned field wraps). Errors name the
// YAML line and the field's path.
package strictyaml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ErrEmpty is a stream with no document, or a document with nothing in it
// (only comments, "---" or a null).
var ErrEmpty = errors.New("empty: no YAML document")

// Decode decodes the one YAML document of b into out (a pointer) strictly
// and returns the document's root node (aliases unexpanded).
func Decode(b []byte, out any) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, ErrEmpty
		}
		return nil, err
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		line := next.Line
		if len(next.Content) > 0 {
			line = next.Content[0].Line
		}
		return nil, fmt.Errorf("line %d: a second YAML document (after ---): a file holds one", line)
	case err != io.EOF:
		return nil, err
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil, ErrEmpty
		}
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return nil, ErrEmpty
	}
	strict := yaml.NewDecoder(bytes.NewReader(b))
	strict.KnownFields(true)
	if err := strict.Decode(out); err != nil {
		return nil, err
	}
	if err := Numbers(root, reflect.TypeOf(out)); err != nil {
		return nil, err
	}
	return root, nil
}

// Resolve follows aliases to the node they name.
func Resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// Number is the value of a scalar YAML reads as a number (any spelling:
// 0x1F, 0o17, +1, -0, 1e3, 1_000, through aliases); ok is false for any
// other node.
func Number(n *yaml.Node) (v any, ok bool) {
	n = Resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return nil, false
	}
	if t := n.ShortTag(); t != "!!int" && t != "!!float" {
		return nil, false
	}
	if err := n.Decode(&v); err != nil {
		return nil, false
	}
	switch v.(type) {
	case int, int64, uint64, float64:
		return v, true
	}
	return nil, false
}

// IsZero reports whether n is a number equal to zero, in any spelling.
func IsZero(n *yaml.Node) bool {
	v, ok := Number(n)
	if !ok {
		return false
	}
	switch x := v.(type) {
	case int:
		return x == 0
	case int64:
		return x == 0
	case uint64:
		return x == 0
	case float64:
		return x == 0
	}
	return false
}

// NumberError is a number that its field cannot hold exactly.
type NumberError struct {
	Line int    // the YAML line
	Path string // the field's path: seeds, policies[0].scorers[1].weight
	Err  error
}

func (e *NumberError) Error() string { return fmt.Sprintf("line %d: %s: %v", e.Line, e.Path, e.Err) }

func (e *NumberError) Unwrap() error { return e.Err }

// Numbers checks every number under n that decodes into an integer field
// of t: it must be an integer that the field holds exactly.
func Numbers(n *yaml.Node, t reflect.Type) error {
	w := walker{seen: map[visit]bool{}}
	return w.walk(n, t, "")
}

type visit struct {
	n *yaml.Node
	t reflect.Type
}

type walker struct {
	seen map[visit]bool // (node, type) already checked: aliases are walked once
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (w *walker) walk(n *yaml.Node, t reflect.Type, path string) error {
	if n == nil {
		return nil
	}
	line := n.Line // where the value is written, an alias or not
	n = Resolve(n)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n == nil || t == nil || w.seen[visit{n, t}] {
		return nil
	}
	w.seen[visit{n, t}] = true
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "<<" && k.ShortTag() == "!!merge" {
				if err := w.merge(v, t, path); err != nil {
					return err
				}
				continue
			}
			if ft, ok := field(t, k.Value); ok {
				if err := w.walk(v, ft, join(path, k.Value)); err != nil {
					return err
				}
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return nil
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := w.walk(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		for i, c := range n.Content {
			if err := w.walk(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if err := fits(n, t); err != nil {
			return &NumberError{Line: line, Path: path, Err: err}
		}
	}
	return nil
}

// merge walks the mappings a merge key (<<) brings into a struct.
func (w *walker) merge(v *yaml.Node, t reflect.Type, path string) error {
	v = Resolve(v)
	if v.Kind == yaml.SequenceNode {
		for _, c := range v.Content {
			if err := w.walk(c, t, path); err != nil {
				return err
			}
		}
		return nil
	}
	return w.walk(v, t, path)
}

// field is the type of the struct field YAML key names (yaml tags,
// lower-cased field names without one, inline structs).
func field(t reflect.Type, key string) (reflect.Type, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if got, ok := field(ft, key); ok {
					return got, true
				}
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		if name == key {
			return f.Type, true
		}
	}
	return nil, false
}

// fits checks a scalar decoded into an integer type t.
func fits(n *yaml.Node, t reflect.Type) error {
	v, ok := Number(n)
	if !ok {
		return nil // not a number: the decoder reported it, or it is a duration ("20s")
	}
	zero := reflect.Zero(t)
	unsigned := t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uintptr
	out := func() error {
		if unsigned {
			return fmt.Errorf("%s is out of range 0..%d", n.Value, uint64(math.MaxUint64)>>(64-t.Bits()))
		}
		return fmt.Errorf("%s is out of range %d..%d", n.Value, int64(-1)<<(t.Bits()-1), int64(math.MaxInt64)>>(64-t.Bits()))
	}
	switch x := v.(type) {
	case int:
		return fitsInt(int64(x), zero, unsigned, out)
	case int64:
		return fitsInt(x, zero, unsigned, out)
	case uint64:
		if unsigned && !zero.OverflowUint(x) {
			return nil
		}
		return out()
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) || x != math.Trunc(x) {
			return fmt.Errorf("%s is not an integer (it would be truncated)", n.Value)
		}
		// 2^63 and 2^64 are exact floats: compare below them.
		switch {
		case unsigned && x >= 0 && x < 1<<64:
			if !zero.OverflowUint(uint64(x)) {
				return nil
			}
		case !unsigned && x >= -(1<<63) && x < 1<<63:
			if !zero.OverflowInt(int64(x)) {
				return nil
			}
		}
		return out()
	}
	return nil
}

func fitsInt(x int64, zero reflect.Value, unsigned bool, out func() error) error {
	if unsigned {
		if x >= 0 && !zero.OverflowUint(uint64(x)) {
			return nil
		}
		return out()
	}
	if zero.OverflowInt(x) {
		return out()
	}
	return nil
}
