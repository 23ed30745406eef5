package strictyaml

import (
	"errors"
	"strings"
	"testing"
)

type inner struct {
	N int8 `yaml:"n"`
}

type shared struct {
	Threads int `yaml:"threads"`
}

type doc struct {
	Seeds  int            `yaml:"seeds"`
	Seed   uint64         `yaml:"seed"`
	Small  uint8          `yaml:"small"`
	Weight int64          `yaml:"weight"`
	Ratio  float64        `yaml:"ratio"`
	List   []int          `yaml:"list"`
	Inner  *inner         `yaml:"inner"`
	Map    map[string]int `yaml:"map"`
	Any    map[string]any `yaml:"any"`
	Name   string         `yaml:"name"`
	shared `yaml:",inline"`
}

func TestDecode(t *testing.T) {
	for _, c := range []struct {
		name, in string
		err      string // "" when the document decodes
	}{
		{name: "integers in any spelling", in: "seeds: 0x10\nseed: 0o17\nsmall: +255\nweight: -9223372036854775808\nlist: [1_000, 1e3, 2.0]"},
		{name: "uint64 max", in: "seed: 18446744073709551615"},
		{name: "a float field takes any number", in: "ratio: 1.9"},
		{name: "numbers under any are not checked", in: "any: {x: 1.5}"},
		{name: "1.9 into an int", in: "weight: 1.9", err: "line 1: weight: 1.9 is not an integer (it would be truncated)"},
		{name: "2.5 into an int", in: "seeds: 2.5", err: "line 1: seeds: 2.5 is not an integer"},
		{name: "2^64 into a uint64", in: "seed: 18446744073709551616", err: "line 1: seed: 18446744073709551616 is out of range 0..18446744073709551615"},
		{name: "2^64 as a float into a uint64", in: "seed: 1.8446744073709551616e19", err: "is out of range 0..18446744073709551615"},
		{name: "2^63 into an int64 (yaml.v3 would wrap it)", in: "weight: 9.223372036854775808e18", err: "weight: 9.223372036854775808e18 is out of range -9223372036854775808..9223372036854775807"},
		// yaml.v3 itself refuses these; they stay refused.
		{name: "1e19 into an int", in: "seeds: 1e19", err: "cannot unmarshal !!float `1e19` into int"},
		{name: "negative into a uint64", in: "seed: -1", err: "cannot unmarshal !!int `-1` into uint64"},
		{name: "256 into a uint8", in: "small: 256", err: "cannot unmarshal !!int `256` into uint8"},
		{name: "in a list", in: "list: [1, 2.5]", err: "line 1: list[1]: 2.5 is not an integer"},
		{name: "in a nested struct", in: "inner:\n  n: 200", err: "line 2: cannot unmarshal !!int `200` into int8"},
		{name: "in a map", in: "map: {a: 0.5}", err: "map.a: 0.5 is not an integer"},
		{name: "in an inline struct", in: "threads: 2.5", err: "threads: 2.5 is not an integer"},
		{name: "through an alias", in: "ratio: &r 2.5\nseeds: *r", err: "line 2: seeds: 2.5 is not an integer"},
		{name: "through a merge key", in: "inner: &i {n: 1}\nmap: {a: 1}\nany: {<<: *i}"},
		{name: ".nan into an int", in: "seeds: .nan", err: "cannot unmarshal !!float `.nan` into int"},
		{name: "unknown field", in: "sedes: 1", err: "field sedes not found"},
		{name: "second document", in: "seeds: 1\n---\nseeds: 2\n", err: "line 3: a second YAML document"},
		{name: "second empty document is still one", in: "seeds: 1\n---\n", err: "a second YAML document"},
		{name: "syntax error in the second document", in: "seeds: 1\n---\n[", err: "yaml:"},
		{name: "empty", in: "", err: ErrEmpty.Error()},
		{name: "comments only", in: "# a\n\n# b\n", err: ErrEmpty.Error()},
		{name: "a null document", in: "---\n~\n", err: ErrEmpty.Error()},
	} {
		t.Run(c.name, func(t *testing.T) {
			var d doc
			_, err := Decode([]byte(c.in), &d)
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("Decode: %v", err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("Decode = %v, want an error containing %q", err, c.err)
			}
		})
	}
}

func TestIsZero(t *testing.T) {
	for _, c := range []struct {
		in   string
		zero bool
	}{
		{"0", true}, {"-0", true}, {"+0", true}, {"0x0", true}, {"0o0", true}, {"0.0", true}, {"-0.0", true}, {"0e5", true},
		{"0_0", true}, {"z: &z 0\nv: *z", true},
		{"1", false}, {"0.5", false}, {"\"0\"", false}, {"~", false}, {"false", false}, {"zero", false},
	} {
		t.Run(c.in, func(t *testing.T) {
			in := c.in
			if !strings.Contains(in, "v:") {
				in = "v: " + in
			}
			var m map[string]any
			root, err := Decode([]byte(in), &m)
			if err != nil {
				t.Fatal(err)
			}
			v := root.Content[len(root.Content)-1]
			if got := IsZero(v); got != c.zero {
				t.Fatalf("IsZero(%s) = %v, want %v", c.in, got, c.zero)
			}
		})
	}
}

// FuzzDecode: any input decodes, or fails with an error; what decodes
// into an integer field passed the exactness check (no panic anywhere).
func FuzzDecode(f *testing.F) {
	for _, s := range []string{"seeds: 2", "seeds: 2.5", "seed: 18446744073709551616", "list: [1, &a 2, *a]", "inner: {n: 1}\n---\n", "", "any: {<<: {a: 1}}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var d doc
		root, err := Decode(in, &d)
		if err == nil && root == nil {
			t.Fatal("no error and no root")
		}
		if errors.Is(err, ErrEmpty) && root != nil {
			t.Fatal("empty with a root")
		}
	})
}
