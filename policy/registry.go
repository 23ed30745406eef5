package policy

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/wattsched/wattsched/strictyaml"
)

// Args is what every policy's typed arguments implement: Default returns
// the policy's defaults (the starting point of decoding), Validate names
// every bad field.
type Args[A any] interface {
	Default() A
	Validate() error
}

// Factory builds one policy of a family from its YAML arguments (empty for
// the defaults) and the family's dependencies D; Check validates arguments
// without building (a scenario is checked before any work).
type Factory[P, D any] struct {
	Build func(args []byte, deps D) (P, error)
	Check func(args []byte) error
}

// Typed adapts a policy package's typed constructor: arguments start from
// the package's defaults, are decoded strictly (an unknown field is an
// error) and validated.
func Typed[A Args[A], P, D any](mk func(A, D) (P, error)) Factory[P, D] {
	decode := func(raw []byte) (A, error) {
		var zero A
		a := zero.Default()
		if len(bytes.TrimSpace(raw)) > 0 {
			// Strictly: unknown fields, and numbers a field cannot hold
			// exactly (threads: 2.5), are errors.
			if _, err := strictyaml.Decode(raw, &a); err != nil && !errors.Is(err, strictyaml.ErrEmpty) {
				// raw is the args re-encoded: its lines are not the file's.
				var ne *strictyaml.NumberError
				if errors.As(err, &ne) {
					return a, fmt.Errorf("%s: %w", ne.Path, ne.Err)
				}
				return a, err
			}
		}
		return a, a.Validate()
	}
	return Factory[P, D]{
		Build: func(raw []byte, deps D) (P, error) {
			a, err := decode(raw)
			if err != nil {
				var zero P
				return zero, err
			}
			return mk(a, deps)
		},
		Check: func(raw []byte) error { _, err := decode(raw); return err },
	}
}

// Registry maps names to the constructors of one policy family: P is what
// the family's policies are (Scorer, HPCScheduler, ElasticScheduler), D
// what they are built with. It is a value built in one function
// (policy/builtin); Register rejects duplicates; names keep registration
// order.
type Registry[P, D any] struct {
	family  string
	entries map[string]Factory[P, D]
	names   []string
}

// NewRegistry returns an empty registry of the named family.
func NewRegistry[P, D any](family string) *Registry[P, D] {
	return &Registry[P, D]{family: family, entries: map[string]Factory[P, D]{}}
}

// Register adds a policy; a duplicate name is an error.
func (r *Registry[P, D]) Register(name string, f Factory[P, D]) error {
	if _, dup := r.entries[name]; dup {
		return fmt.Errorf("%s policy %q registered twice", r.family, name)
	}
	r.entries[name] = f
	r.names = append(r.names, name)
	return nil
}

func (r *Registry[P, D]) entry(name string) (Factory[P, D], error) {
	f, ok := r.entries[name]
	if !ok {
		return f, fmt.Errorf("unknown %s policy %q (known: %s)", r.family, name, strings.Join(r.names, ", "))
	}
	return f, nil
}

// New builds the named policy; errors name the policy's arguments.
func (r *Registry[P, D]) New(name string, args []byte, deps D) (P, error) {
	f, err := r.entry(name)
	if err != nil {
		var zero P
		return zero, err
	}
	p, err := f.Build(args, deps)
	if err != nil {
		return p, fmt.Errorf("%s args: %w", name, err)
	}
	return p, nil
}

// Check reports whether name is registered and args decode and validate.
func (r *Registry[P, D]) Check(name string, args []byte) error {
	f, err := r.entry(name)
	if err != nil {
		return err
	}
	if err := f.Check(args); err != nil {
		return fmt.Errorf("%s args: %w", name, err)
	}
	return nil
}

// Names lists the registered policies in registration order.
func (r *Registry[P, D]) Names() []string { return append([]string(nil), r.names...) }

// Registries holds one registry per policy family.
type Registries struct {
	// Scorers are the placement scorers a Placer combines (GPU-sharing
	// tasks, kube-scheduler score plugins).
	Scorers *Registry[Scorer, Deps]
	// HPC are the schedulers of rigid jobs on exclusive nodes.
	HPC *Registry[HPCScheduler, HPCDeps]
	// Elastic are the schedulers of elastic training jobs.
	Elastic *Registry[ElasticScheduler, ElasticDeps]
	// Coloc are the schedulers of co-located (GPU-sharing) training jobs.
	Coloc *Registry[ColocScheduler, ColocDeps]
	// Slotted are the planners of slotted clusters (training epochs and
	// inference load per 15-minute slot: CE-DLA and its baselines).
	Slotted *Registry[SlotPlanner, SlotDeps]
}

// NewRegistries returns empty registries of every family.
func NewRegistries() *Registries {
	return &Registries{
		Scorers: NewRegistry[Scorer, Deps]("placement"),
		HPC:     NewRegistry[HPCScheduler, HPCDeps]("HPC"),
		Elastic: NewRegistry[ElasticScheduler, ElasticDeps]("elastic"),
		Coloc:   NewRegistry[ColocScheduler, ColocDeps]("co-location"),
		Slotted: NewRegistry[SlotPlanner, SlotDeps]("slotted"),
	}
}

// Ref names a policy of a family with its arguments, as a scenario file
// writes it.
type Ref struct {
	Policy string `yaml:"policy" json:"policy"`
	// Args are the policy's arguments (see its docs page); omitted fields
	// keep their defaults.
	Args map[string]any `yaml:"args" json:"args,omitempty"`
}

// RawArgs renders Args as YAML for a Registry (nil when there are none).
func (r Ref) RawArgs() ([]byte, error) {
	if len(r.Args) == 0 {
		return nil, nil
	}
	var buf bytes.Buffer
	if err := yaml.NewEncoder(&buf).Encode(r.Args); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
