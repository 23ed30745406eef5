package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCEDLABadInputs: a malformed models table or price series gives one
// error naming file, line and column, exit 1, and no output directory.
func TestCEDLABadInputs(t *testing.T) {
	dir := t.TempDir()
	models := filepath.Join(dir, "models.csv")
	os.WriteFile(models, []byte("quantity,model,gpu,value,unit,source\ntdp,*,RTX2060,-5,W,x\n"), 0o644)
	prices := filepath.Join(dir, "prices.csv")
	os.WriteFile(prices, []byte("Datetime (UTC),Price (USD/MWh)\n2020-06-01 00:00:00,12\n2020-06-01 01:00:00,abc\n"), 0o644)
	for _, c := range []struct {
		flag, file, want string
	}{
		{"--models", models, models + `:2: column value: "-5" is not a finite number > 0`},
		{"--prices", prices, prices + `:3: column Price (USD/MWh): "abc" is not a finite number`},
	} {
		t.Run(c.flag, func(t *testing.T) {
			out := filepath.Join(dir, "out"+c.flag)
			code, _, errs := run(t, "reproduce", "cedla", "--quick", c.flag, c.file, "-o", out)
			if code != 1 {
				t.Fatalf("exit code %d, want 1 (%s)", code, errs)
			}
			if !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
				t.Fatalf("stderr = %q, want one line containing %q", errs, c.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("output directory created despite the error")
			}
		})
	}
}
