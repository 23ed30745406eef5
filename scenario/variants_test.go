package scenario

import (
	"strings"
	"testing"
)

// Variants are decoded strictly and validated with their paths; a bad
// one is an error naming the file, the line or the field.
func TestVariantsValidate(t *testing.T) {
	const head = "name: v\nmode: replay\ntrace: {pods: p.csv}\npower_limit: {tdp_fraction: 0.9}\npolicies:\n  - {name: A, scorers: [{policy: fgd, weight: 1}]}\nvariants:\n"
	for _, c := range []struct {
		name, variants, want string
	}{
		{"unknown field", "  - name: x\n    power_dwn: {idle_after_s: 60}\n", "line 9: field power_dwn not found"},
		{"scenario field not overridable", "  - name: x\n    seeds: 3\n", "line 9: field seeds not found"},
		{"duplicate names", "  - {name: x, pue: 1.2}\n  - {name: x, pue: 1.3}\n", `variants[1].name: duplicate "x"`},
		{"empty name", "  - {pue: 1.2}\n", "variants[0].name: empty"},
		{"the base's name", "  - {name: as configured, pue: 1.2}\n", `name "as configured" is the scenario's own settings`},
		{"pue out of range", "  - {name: x, pue: 0.5}\n", "variants[0].pue: 0.5, want 1..3"},
		{"bad power_down", "  - name: x\n    power_down: {idle_after_s: 0.5, wake_s: 1, off_w: 1}\n", "variants[0].power_down.idle_after_s: 0.5"},
		{"bad power_limit", "  - name: x\n    power_limit: {tdp_fraction: 2}\n", "variants[0].power_limit.tdp_fraction: 2"},
		{"both power_down and no_power_down", "  - name: x\n    power_down: {idle_after_s: 60, wake_s: 1, off_w: 1}\n    no_power_down: true\n", "power_down and no_power_down both set"},
		{"no power_down to remove", "  - {name: x, no_power_down: true}\n", "variants[0].no_power_down: the scenario has no power_down"},
		{"overrides nothing", "  - {name: x}\n", "variants[0] (x): overrides nothing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(head+c.variants), "s.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "s.yaml: ") {
				t.Errorf("error %v, want s.yaml: ... %q", err, c.want)
			}
		})
	}
	s, err := Parse([]byte(head+"  - {name: off, no_power_limit: true}\n  - {name: pd, power_down: {idle_after_s: 60, wake_s: 1, off_w: 2}, pue: 1.5}\n"), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The scenario's own settings, its two variants, and the automatic
	// power-down is not added: variant pd powers down.
	vs := s.CompareVariants()
	if len(vs) != 3 || vs[0].Name != BaseVariant || vs[1].Name != "off" || vs[2].Name != "pd" {
		t.Fatalf("CompareVariants = %+v", vs)
	}
	if off := s.WithVariant(vs[1]); off.PowerLimit != nil || s.PowerLimit == nil {
		t.Error("no_power_limit: want the variant without and the scenario still with its limit")
	}
	if pd := s.WithVariant(vs[2]); pd.PowerDown == nil || pd.PowerDown.OffW != 2 || pd.Grid == nil || pd.Grid.PUE != 1.5 || s.Grid != nil {
		t.Errorf("pd variant: %+v %+v; the scenario's grid %+v must stay nil", pd.PowerDown, pd.Grid, s.Grid)
	}
	plain, err := Parse([]byte(strings.TrimSuffix(head, "variants:\n")), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if vs := plain.CompareVariants(); len(vs) != 2 || !vs[1].Automatic || vs[1].PowerDown == nil || *vs[1].PowerDown != AutoPowerDown {
		t.Errorf("no power-down anywhere: want the automatic variant, got %+v", vs)
	}
}
