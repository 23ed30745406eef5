package policy

import (
	"errors"
	"strings"
	"testing"
)

type testArgs struct {
	Threads int     `yaml:"threads"`
	Ratio   float64 `yaml:"ratio"`
}

func (testArgs) Default() testArgs { return testArgs{Threads: 1} }

func (a testArgs) Validate() error {
	if a.Threads < 1 {
		return errors.New("threads: want >= 1")
	}
	return nil
}

// Typed decodes arguments strictly: unknown fields, and numbers an
// integer field cannot hold exactly, are errors naming the field (not the
// line of the re-encoded arguments).
func TestTypedDecodesStrictly(t *testing.T) {
	f := Typed(func(a testArgs, _ struct{}) (testArgs, error) { return a, nil })
	for _, c := range []struct {
		name string
		args map[string]any
		want int    // threads built, when no error
		err  string // in the error, when one
	}{
		{name: "defaults", want: 1},
		{name: "an integer", args: map[string]any{"threads": 4}, want: 4},
		{name: "a float that is an integer", args: map[string]any{"threads": 4.0}, want: 4},
		{name: "2.5 would be truncated", args: map[string]any{"threads": 2.5}, err: "threads: 2.5 is not an integer (it would be truncated)"},
		{name: "2^63 as an integer (yaml.v3 refuses it)", args: map[string]any{"threads": uint64(1) << 63}, err: "into int"},
		{name: "1e19 would wrap", args: map[string]any{"threads": 9.223372036854775808e18}, err: "threads: 9.223372036854776e+18 is out of range"},
		{name: "unknown field", args: map[string]any{"thread": 2}, err: "field thread not found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw, err := Ref{Policy: "x", Args: c.args}.RawArgs()
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.Build(raw, struct{}{})
			switch {
			case c.err == "" && (err != nil || got.Threads != c.want):
				t.Fatalf("Build = %+v, %v; want threads %d", got, err, c.want)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("Build error = %v, want one containing %q", err, c.err)
			case strings.HasPrefix(c.err, "threads:") && err.Error() != c.err && !strings.HasPrefix(err.Error(), c.err):
				t.Fatalf("Build error = %v, want it to start with the field, not a line of the re-encoded arguments", err)
			}
		})
	}
}
