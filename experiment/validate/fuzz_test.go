package validate

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzRead feeds arbitrary bytes as a Zeus power file: read either fails
// with an error naming the file, or returns points with a finite power
// above zero and a line number past the header.
func FuzzRead(f *testing.F) {
	seed, err := os.ReadFile(filepath.Join(testTraces, "zeus-nsdi23", "summary_power_p100.csv"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(seed))
	f.Add("dataset,network,batch_size,power_limit,average_power\na,b,1,100,NaN\n")
	f.Add("dataset,network,batch_size,power_limit,average_power\n\"a,b,1,100,5\n")
	var zeus source
	for _, s := range sources() {
		if s.gpu == "P100" {
			zeus = s
		}
	}
	f.Fuzz(func(t *testing.T, data string) {
		dir := t.TempDir()
		p := filepath.Join(dir, filepath.FromSlash(zeus.file))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		pts, err := zeus.read(dir)
		if err != nil {
			if !strings.Contains(err.Error(), zeus.file) {
				t.Errorf("error %q does not name the file", err)
			}
			return
		}
		for _, x := range pts {
			if !(x.Watts > 0) || math.IsInf(x.Watts, 0) || x.Line < 2 {
				t.Errorf("bad point %+v", x)
			}
		}
	})
}
