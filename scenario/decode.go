package scenario

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/wattsched/wattsched/strictyaml"
	"github.com/wattsched/wattsched/userfile"
)

// Bounds on a scenario's text (docs/scenarios.md): a name (of the
// scenario, a policy, a system) is one short line, a description a
// paragraph; both are copied into every result.
const (
	MaxNameBytes        = 256
	MaxDescriptionBytes = 4 << 10
)

// decode decodes a scenario file's bytes into s: one YAML document,
// strictly (unknown fields, numbers an integer field cannot hold exactly),
// no explicit zero in a field whose zero means the default, no control
// character in a string and no name or description past its bound.
func decode(b []byte, file string, s *Scenario) error {
	if int64(len(b)) > userfile.Scenario.Bytes {
		return fmt.Errorf("%s: %d bytes, larger than %d MiB (the limit of %s)", file, len(b), userfile.Scenario.Bytes>>20, userfile.Scenario.What)
	}
	root, err := strictyaml.Decode(b, s)
	if errors.Is(err, strictyaml.ErrEmpty) {
		return fmt.Errorf("scenario %s is empty (nothing but blank lines and comments): it needs at least a name and a mode (docs/scenarios.md)", file)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if err := explicitZeros(root); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if err := texts(root, ""); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	s.Topology.recordLines(file, lookup(root, "topology"))
	s.migLines = newMIGLines(file, lookup(root, "mig"))
	if vs := resolveSeq(lookup(root, "variants")); len(vs) == len(s.Variants) {
		for i := range s.Variants {
			s.Variants[i].Topology.recordLines(file, lookup(vs[i], "topology"))
			s.variantMIGLines = append(s.variantMIGLines, newMIGLines(file, lookup(vs[i], "mig")))
		}
	}
	return nil
}

// seedsWrap reports seeds first_seed..first_seed+seeds-1 passing 2^64-1
// (Validate: compare --seeds changes seeds after decoding).
func (s *Scenario) seedsWrap(bad *problems) {
	if s.Seeds > 1 && s.FirstSeed > math.MaxUint64-uint64(s.Seeds-1) {
		bad.add("first_seed: %d: the last of %d seeds would pass 2^64-1 and wrap", s.FirstSeed, s.Seeds)
	}
}

// lookup is the value of key in mapping n (through aliases and merge
// keys), nil when absent.
func lookup(n *yaml.Node, key string) *yaml.Node {
	n = strictyaml.Resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var merged *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		switch {
		case k.Value == key && k.ShortTag() != "!!merge":
			return n.Content[i+1]
		case k.ShortTag() == "!!merge" && merged == nil:
			v := strictyaml.Resolve(n.Content[i+1])
			if v.Kind == yaml.SequenceNode {
				for _, c := range v.Content {
					if merged = lookup(c, key); merged != nil {
						break
					}
				}
			} else {
				merged = lookup(v, key)
			}
		}
	}
	return merged
}

// explicitZeros reports a defaulted field written as zero in any YAML
// spelling (0, -0, +0, 0.0, 0x0, 0o0, an alias of a 0), with its line.
func explicitZeros(root *yaml.Node) error {
	for _, path := range defaulted {
		n := root
		for _, key := range path {
			n = lookup(n, key)
		}
		if n != nil && strictyaml.IsZero(n) {
			v := strictyaml.Resolve(n).Value
			if v != "0" {
				v += " (zero)"
			}
			return fmt.Errorf("line %d: %s: %s; leave it out for the default or give a value > 0", n.Line, strings.Join(path, "."), v)
		}
	}
	return nil
}

// texts checks every string of the document: no control character but
// tab and newline (none at all in a name), names and descriptions within
// their bounds.
func texts(n *yaml.Node, path string) error {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for i, c := range n.Content {
			p := path
			if n.Kind == yaml.SequenceNode {
				p = fmt.Sprintf("%s[%d]", path, i)
				// A system named by a plain string is a preset's name.
				if strings.HasSuffix(path, "systems") && c.Kind == yaml.ScalarNode {
					p += ".name"
				}
			}
			if err := texts(c, p); err != nil {
				return err
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if err := text(k, path+" (a key)"); err != nil {
				return err
			}
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			if err := texts(n.Content[i+1], p); err != nil {
				return err
			}
		}
	case yaml.ScalarNode:
		return text(n, path)
	}
	return nil
}

func text(n *yaml.Node, path string) error {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return nil
	}
	name := path == "name" || strings.HasSuffix(path, ".name")
	for _, r := range n.Value {
		if unicode.IsControl(r) && (name || r != '\t' && r != '\n') {
			what := "a control character"
			if name {
				what = "a control character (a name is one line of printable text)"
			}
			return fmt.Errorf("line %d: %s: %q holds %s %U", n.Line, path, clip(n.Value), what, r)
		}
	}
	switch {
	case name && len(n.Value) > MaxNameBytes:
		return fmt.Errorf("line %d: %s: %d bytes, more than %d (the limit of a name)", n.Line, path, len(n.Value), MaxNameBytes)
	case path == "description" && len(n.Value) > MaxDescriptionBytes:
		return fmt.Errorf("line %d: description: %d bytes, more than %d KiB (the limit of a description, which every result copies)", n.Line, len(n.Value), MaxDescriptionBytes>>10)
	}
	return nil
}

// clip shortens a string for an error message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
