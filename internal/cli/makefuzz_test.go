package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// make fuzz runs every fuzz target of the repository (issue 28): a Fuzz
// function added without its line in the Makefile fails here.
func TestMakeFuzzRunsEveryFuzzTarget(t *testing.T) {
	root := filepath.Join("..", "..")
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	// Lines such as: [cd k8s && ]$(GO) test -run '^$$' -fuzz '^FuzzRead$$' -fuzztime $(FUZZTIME) ./trace/swf
	line := regexp.MustCompile(`(?m)^\t(cd (\S+) && )?\$\(GO\) test -run '\^\$\$' -fuzz '\^(Fuzz\w+)\$\$' -fuzztime \$\(FUZZTIME\) (\S+)$`)
	listed := map[string]bool{}
	for _, m := range line.FindAllStringSubmatch(string(mk), -1) {
		listed[filepath.ToSlash(filepath.Join(m[2], m[4]))+" "+m[3]] = true
	}
	fuzzFunc := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(`)
	found := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != root || d.Name() == "testdata" || d.Name() == "out" || d.Name() == "build") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		for _, m := range fuzzFunc.FindAllStringSubmatch(string(src), -1) {
			found++
			key := filepath.ToSlash(rel) + " " + m[1]
			if !listed[key] {
				t.Errorf("%s (%s) is not run by make fuzz: add its line to the Makefile's fuzz target", m[1], filepath.ToSlash(rel))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Fatal("found no fuzz targets: the walk is wrong")
	}
}
