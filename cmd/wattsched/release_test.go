package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/internal/cli"
)

// TestNestedModulesImportable checks that, once scripts/release has tagged
// a release, a module outside this repository can import the k8s and
// nvmlagent modules and gets exactly the dependencies this repository
// builds them with.
//
// Without the release step that fails: the nested modules require the core
// at v0.0.0 and reach it through `replace => ../`, which a module that
// imports them ignores. The release script makes them require the core at
// the release version and tags the three modules.
//
// The checkout's committed files become a scratch repository (scratch);
// scripts/release tags v<cli.Version>. For each nested module, a consumer module (its own
// go.mod requiring the nested module at that tag, go.sum seeded from the
// nested module's so that every download is checked against it, and for
// k8s the k8s.io replace block that every importer of k8s.io/kubernetes
// needs) holds a copy of the module's command as its main package; go mod
// tidy must resolve it from an empty module cache, and the modules that
// provide the command's packages must be those the nested module itself
// uses, version for version. Packages are listed, not compiled: the same
// source at the same versions is compiled by make test in the nested
// modules themselves.
func TestNestedModulesImportable(t *testing.T) {
	if testing.Short() {
		t.Skip("resolves the Kubernetes module graph in a fresh module cache; run without -short")
	}
	s := newScratch(t)
	version := "v" + cli.Version
	// The release needs a CHANGELOG heading for its version; where the
	// version is not yet released, the scratch copy's "## Unreleased"
	// becomes it, as a maintainer would rename it.
	changelog := filepath.Join(s.repo, "CHANGELOG.md")
	b := read(t, changelog)
	if !strings.Contains(b, "\n## "+cli.Version+" ") {
		if !strings.Contains(b, "\n## Unreleased\n") {
			t.Fatalf("CHANGELOG.md has neither a \"## %s\" nor a \"## Unreleased\" heading", cli.Version)
		}
		write(t, changelog, strings.Replace(b, "\n## Unreleased\n", "\n## "+cli.Version+" — release test\n", 1))
	}
	s.commit(t, "main before the release")
	gopath := filepath.Join(s.tmp, "gopath")
	env := append(s.goEnv(gopath), "GO="+s.goBin)
	// --no-images: the images are built and tested by make images-test.
	run(t, s.repo, env, filepath.Join(s.repo, "scripts", "release"), version, "--no-images")
	tags := strings.Fields(s.git(t, "tag", "--list"))
	for _, tag := range []string{version, "k8s/" + version, "nvmlagent/" + version} {
		if !slices.Contains(tags, tag) {
			t.Errorf("scripts/release did not tag %s (tags %v)", tag, tags)
		}
	}

	for _, c := range []struct{ mod, cmd string }{
		{"k8s", "cmd/kube-scheduler"},
		{"nvmlagent", "cmd/wattsched-nvml-agent"},
	} {
		t.Run(c.mod, func(t *testing.T) {
			nested := filepath.Join(s.repo, c.mod)
			var gomod struct {
				Go      string
				Require []struct{ Path, Version string }
				Replace []struct {
					Old, New struct{ Path, Version string }
				}
			}
			if err := json.Unmarshal([]byte(run(t, nested, env, s.goBin, "mod", "edit", "-json")), &gomod); err != nil {
				t.Fatal(err)
			}
			if i := slices.IndexFunc(gomod.Require, func(r struct{ Path, Version string }) bool { return r.Path == modulePath }); i < 0 || gomod.Require[i].Version != version {
				t.Fatalf("%s/go.mod after the release requires %v, want %s %s", c.mod, gomod.Require, modulePath, version)
			}

			consumer := filepath.Join(s.tmp, "consumer-"+c.mod)
			if err := os.MkdirAll(consumer, 0o755); err != nil {
				t.Fatal(err)
			}
			mod := "module example.com/consumer\n\ngo " + gomod.Go + "\n\nrequire " + modulePath + "/" + c.mod + " " + version + "\n"
			for _, r := range gomod.Replace {
				if r.Old.Path != modulePath { // the core's replace is this repository's own
					mod += "\nreplace " + r.Old.Path + " => " + r.New.Path + " " + r.New.Version
				}
			}
			write(t, filepath.Join(consumer, "go.mod"), mod+"\n")
			write(t, filepath.Join(consumer, "go.sum"), read(t, filepath.Join(nested, "go.sum")))
			write(t, filepath.Join(consumer, "main.go"), read(t, filepath.Join(nested, c.cmd, "main.go")))

			run(t, consumer, env, s.goBin, "mod", "tidy")
			got := providers(t, consumer, env, s.goBin, ".")
			want := providers(t, nested, env, s.goBin, "./"+c.cmd)
			delete(got, "example.com/consumer")
			nestedPath := modulePath + "/" + c.mod
			if got[nestedPath] != version {
				t.Errorf("the consumer builds %s at %q, want %s", nestedPath, got[nestedPath], version)
			}
			delete(got, nestedPath)
			delete(want, nestedPath)
			if _, ok := want[modulePath]; ok && got[modulePath] != version { // the agent's command imports no core package
				t.Errorf("the consumer builds %s at %q, want %s", modulePath, got[modulePath], version)
			}
			delete(got, modulePath)
			delete(want, modulePath)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("modules providing %s's packages, in the repository (-) and in a consumer (+):\n%s", c.cmd, diff)
			}
		})
	}
}

// providers maps each module that provides a package of pkg (and its
// dependencies, in dir's module) to its version.
func providers(t *testing.T, dir string, env []string, goBin, pkg string) map[string]string {
	t.Helper()
	out := run(t, dir, append(env, "CGO_ENABLED=1"), goBin, "list", "-deps", "-f", "{{with .Module}}{{.Path}} {{.Version}}{{end}}", pkg)
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if path, v, ok := strings.Cut(line, " "); ok {
			m[path] = v
		}
	}
	if len(m) < 2 {
		t.Fatalf("go list -deps %s in %s: %q, want the modules of its packages", pkg, dir, out)
	}
	return m
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
