package main

import (
	"archive/tar"
	"bytes"
	"crypto/x509"
	"debug/buildinfo"
	"debug/elf"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// The images `make images` wrote; `make images-test` (part of `make test`)
// builds them first.
var imagesDir = flag.String("images", "../../build/images", "the folder make images writes")

// TestImages unpacks each image, checks its configuration and files, and
// runs the binary it carries: in a chroot of the image as user 65532 where
// the test runs as root, else straight from the unpacked tree (the agent
// through the image's own dynamic loader and libraries).
func TestImages(t *testing.T) {
	version := sourceVersion(t)
	source := "https://" + moduleLine(t, "../../go.mod")
	type imageCase struct {
		name   string // the repository's last element and the binary's name
		suffix string // the tag's, after vVERSION (and the layout folder's, after name)
		check  func(t *testing.T, root string, run func(args ...string) (string, error), labels map[string]string)
	}
	// One kube-scheduler image per Kubernetes minor the k8s module
	// supports (k8s/go.mod and k8s/go.k8s1NN.mod), each running its minor.
	var cases []imageCase
	// The shadow is built on the newest minor (k8s/go.mod).
	newest := k8sVersions(t)[len(k8sVersions(t))-1]
	for _, mv := range k8sVersions(t) {
		minor, k8sVersion := mv[0], mv[1]
		cases = append(cases, imageCase{"kube-scheduler", "-k8s" + minor, func(t *testing.T, root string, run func(...string) (string, error), labels map[string]string) {
			assertStatic(t, root, "kube-scheduler")
			out, err := run("--version")
			if err != nil {
				t.Fatalf("--version: %v\n%s", err, out)
			}
			want := "wattsched " + version + " kube-scheduler (revision " + labels["org.opencontainers.image.revision"] + ", k8s.io/kubernetes " + k8sVersion + ", go"
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != 2 || !strings.HasPrefix(lines[0], want) || lines[1] != "Kubernetes "+k8sVersion {
				t.Errorf("--version printed %q, want %q... then %q", out, want, "Kubernetes "+k8sVersion)
			}
		}})
	}
	if _, err := os.Stat(filepath.Join(*imagesDir, "kube-scheduler"+cases[0].suffix, "index.json")); err != nil {
		t.Fatalf("no images in %s (%v): run make images first (make images-test does)", *imagesDir, err)
	}
	for _, c := range append(cases, []imageCase{
		{"wattsched", "", func(t *testing.T, root string, run func(...string) (string, error), labels map[string]string) {
			assertStatic(t, root, "wattsched")
			out, err := run("--version")
			if err != nil || !strings.HasPrefix(out, "wattsched "+version+" ") {
				t.Errorf("--version: %v, printed %q, want wattsched %s", err, out, version)
			}
			// The commit, where Go stamped it (make build asks; Go finds
			// no repository in a git worktree): the label's.
			rev := labels["org.opencontainers.image.revision"]
			if m := regexp.MustCompile(`revision ([0-9a-f]{40})`).FindStringSubmatch(out); m != nil {
				if m[1] != strings.TrimSuffix(rev, "-dirty") || strings.HasSuffix(rev, "-dirty") != strings.Contains(out, "modified") {
					t.Errorf("--version printed %q, the image's revision label is %s", out, rev)
				}
			}
			bi, err := buildinfo.ReadFile(filepath.Join(root, "wattsched"))
			if err != nil {
				t.Fatal(err)
			}
			tags := ""
			for _, s := range bi.Settings {
				if s.Key == "-tags" {
					tags = s.Value
				}
			}
			if !strings.Contains(","+tags+",", ",highs,") {
				t.Errorf("built with tags %q: no highs, so no CE-DLA", tags)
			}
			if _, err := os.Stat(filepath.Join(root, "usr/share/doc/highs/LICENSE")); err != nil {
				t.Errorf("HiGHS's licence is not in the image: %v", err)
			}
			// CE-DLA solves its plans with HiGHS (a build without it
			// refuses the policy): a small slotted run (one node per
			// type, one day, 2 jobs) in the image.
			scenario := "name: tiny-cedla\nseeds: 1\nslotted:\n  nodes: {GTX1060-3GB: 1, GTX1060-6GB: 1, RTX2060: 1, GTX1080: 1}\n  slots: 96\n  lookahead: 4\n  replan_every: 4\n" +
				"  jobs: {count: 2}\n  inference: {req_per_min: 500}\n  systems:\n    - {name: CE-DLA soft, policy: cedla, args: {mode: soft}}\n"
			if err := os.WriteFile(filepath.Join(root, "tmp/tiny.yaml"), []byte(scenario), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err = run("run", "-c", "/tmp/tiny.yaml", "-o", "/tmp/out")
			if err != nil {
				t.Fatalf("CE-DLA in the image: %v\n%s", err, out)
			}
			if b, err := os.ReadFile(filepath.Join(root, "tmp/out/summary.json")); err != nil || !bytes.Contains(b, []byte("CE-DLA soft")) {
				t.Errorf("CE-DLA run wrote no summary naming it: %v", err)
			}
		}},
		{"wattsched-nvml-agent", "", func(t *testing.T, root string, run func(...string) (string, error), labels map[string]string) {
			out, err := run("--version")
			want := "wattsched " + version + " wattsched-nvml-agent (revision " + labels["org.opencontainers.image.revision"] + ", github.com/NVIDIA/go-nvml v"
			if err != nil || !strings.HasPrefix(out, want) {
				t.Errorf("--version: %v, printed %q, want %q...", err, out, want)
			}
		}},
		{"wattsched-shadow", "", func(t *testing.T, root string, run func(...string) (string, error), labels map[string]string) {
			assertStatic(t, root, "wattsched-shadow")
			out, err := run("-version")
			want := "wattsched " + version + " wattsched-shadow (revision " + labels["org.opencontainers.image.revision"] + ", k8s.io/kubernetes " + newest[1] + ", go"
			if err != nil || !strings.HasPrefix(out, want) {
				t.Errorf("-version: %v, printed %q, want %q...", err, out, want)
			}
		}},
	}...) {
		t.Run(c.name+c.suffix, func(t *testing.T) {
			img, ref := layoutImage(t, filepath.Join(*imagesDir, c.name+c.suffix))
			if want := "/" + c.name + ":v" + version + c.suffix; !strings.HasSuffix(ref, want) {
				t.Errorf("image name %q, want REGISTRY%s", ref, want)
			}
			// The tarball holds the same configuration and layers (its
			// manifest is Docker's format, so its digest differs).
			tb, err := tarball.ImageFromPath(filepath.Join(*imagesDir, c.name+c.suffix+".tar"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if l, tr := parts(t, img), parts(t, tb); !slices.Equal(l, tr) {
				t.Errorf("tarball's config and layers %v, layout's %v", tr, l)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			cfg := cf.Config
			if len(cfg.Entrypoint) != 1 || cfg.Entrypoint[0] != "/"+c.name {
				t.Errorf("entrypoint %q", cfg.Entrypoint)
			}
			if cfg.User != "65532:65532" {
				t.Errorf("user %q, want 65532:65532 (numeric, so that runAsNonRoot can check it)", cfg.User)
			}
			labels := cfg.Labels
			if labels["org.opencontainers.image.version"] != version || labels["org.opencontainers.image.source"] != source ||
				labels["org.opencontainers.image.title"] != c.name {
				t.Errorf("labels %v: want version %s, source %s, title %s", labels, version, source, c.name)
			}
			if !regexp.MustCompile(`^[0-9a-f]{40}(-dirty)?$`).MatchString(labels["org.opencontainers.image.revision"]) {
				t.Errorf("revision label %q", labels["org.opencontainers.image.revision"])
			}
			if created, err := time.Parse(time.RFC3339, labels["org.opencontainers.image.created"]); err != nil || !created.Equal(cf.Created.Time) {
				t.Errorf("created label %q, config %v", labels["org.opencontainers.image.created"], cf.Created)
			}
			root := t.TempDir()
			unpack(t, img, root)
			checkBase(t, root)
			c.check(t, root, runner(t, root, c.name), labels)
		})
	}
}

// checkBase: the non-root user, the CA bundle, a writable /tmp, and no
// set-uid file and no file of the user's but its home.
func checkBase(t *testing.T, root string) {
	t.Helper()
	passwd, err := os.ReadFile(filepath.Join(root, "etc/passwd"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(passwd), "\nnonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd has no user 65532:\n%s", passwd)
	}
	pem, err := os.ReadFile(filepath.Join(root, "etc/ssl/certs/ca-certificates.crt"))
	if err != nil {
		t.Fatal(err)
	}
	if pool := x509.NewCertPool(); !pool.AppendCertsFromPEM(pem) {
		t.Error("the CA bundle holds no certificate")
	}
	if fi, err := os.Stat(filepath.Join(root, "tmp")); err != nil || fi.Mode()&os.ModeSticky == 0 || fi.Mode().Perm() != 0o777 {
		t.Errorf("/tmp: %v %v, want 1777", fi.Mode(), err)
	}
}

// assertStatic: the binary has no dynamic loader (it runs on the base
// layer alone).
func assertStatic(t *testing.T, root, name string) {
	t.Helper()
	f, err := elf.Open(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if in := interpreter(f); in != "" {
		t.Errorf("%s is dynamically linked (%s)", name, in)
	}
}

// runner runs the image's entrypoint with args, in a chroot of root as
// 65532:65532 where the test is root; otherwise from the unpacked tree,
// through the image's own loader and libraries when the binary is dynamic.
func runner(t *testing.T, root, name string) func(args ...string) (string, error) {
	bin := "/" + name
	env := []string{"PATH=/usr/bin:/bin", "HOME=/home/nonroot"}
	return func(args ...string) (string, error) {
		if os.Geteuid() == 0 {
			cmd := exec.Command(bin, args...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: 65532, Gid: 65532}}
			cmd.Dir = "/"
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if !errors.Is(err, syscall.EPERM) {
				return string(out), err
			}
			// Root without the right to chroot (a container without
			// CAP_SYS_CHROOT): run from the tree as below.
			t.Logf("chroot refused (%v): running %s from the unpacked tree", err, name)
		}
		f, err := elf.Open(filepath.Join(root, bin))
		if err != nil {
			return "", err
		}
		in := interpreter(f)
		f.Close()
		var cmd *exec.Cmd
		if in == "" {
			cmd = exec.Command(filepath.Join(root, bin), rooted(root, args)...)
		} else {
			libs, _ := filepath.Glob(filepath.Join(root, "lib", "*-linux-gnu"))
			cmd = exec.Command(filepath.Join(root, in), append([]string{"--library-path", strings.Join(libs, ":"), filepath.Join(root, bin)}, rooted(root, args)...)...)
		}
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
}

// rooted: absolute paths among args, under root (for runs without chroot).
func rooted(root string, args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.HasPrefix(a, "/") {
			a = filepath.Join(root, a)
		}
		out[i] = a
	}
	return out
}

func layoutImage(t *testing.T, dir string) (v1.Image, string) {
	t.Helper()
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 {
		t.Fatalf("%s: %d manifests, want 1", dir, len(m.Manifests))
	}
	d := m.Manifests[0]
	if d.Platform == nil || d.Platform.OS != "linux" {
		t.Errorf("%s: platform %v", dir, d.Platform)
	}
	img, err := idx.Image(d.Digest)
	if err != nil {
		t.Fatal(err)
	}
	return img, d.Annotations["org.opencontainers.image.ref.name"]
}

// parts: the digests of the image's configuration and layers.
func parts(t *testing.T, img v1.Image) []v1.Hash {
	t.Helper()
	c, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	ls, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	out := []v1.Hash{c}
	for _, l := range ls {
		d, err := l.Digest()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// unpack writes the image's flattened file system under root, with modes,
// and owners where the test may set them.
func unpack(t *testing.T, img v1.Image, root string) {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			// Extract writes the archive's end before its error: read
			// on to get it (an unreadable layer, say).
			if _, err := io.Copy(io.Discard, rc); err != nil {
				t.Fatalf("unpacking the image: %v", err)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(root, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(p, root+string(filepath.Separator)) {
			t.Fatalf("%q leaves the image's root", h.Name)
		}
		if h.Mode&(04000|02000) != 0 {
			t.Errorf("%s is set-uid or set-gid", h.Name)
		}
		if h.Uid != 0 && strings.TrimSuffix(h.Name, "/") != "home/nonroot" {
			t.Errorf("%s belongs to uid %d", h.Name, h.Uid)
		}
		mode := os.FileMode(h.Mode).Perm()
		if h.Mode&01000 != 0 {
			mode |= os.ModeSticky
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeSymlink:
			if err := os.Symlink(h.Linkname, p); err != nil {
				t.Fatal(err)
			}
			continue
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			f.Close()
		default:
			t.Fatalf("%s: unexpected entry type %c", h.Name, h.Typeflag)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		if os.Geteuid() == 0 {
			if err := os.Lchown(p, h.Uid, h.Gid); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The temporary folder itself must be reachable by user 65532.
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
}

// sourceVersion: internal/cli's Version, what every result records.
func sourceVersion(t *testing.T) string {
	t.Helper()
	files, _ := filepath.Glob("../../internal/cli/*.go")
	re := regexp.MustCompile(`(?m)^\s*(?:const\s+)?Version\s*=\s*"([^"]+)"`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := re.FindSubmatch(b); m != nil {
			return string(m[1])
		}
	}
	t.Fatal("no Version constant in internal/cli")
	return ""
}

// k8sVersions: per Kubernetes minor the k8s module supports, the minor
// and the k8s.io/kubernetes version its module file requires (k8s/go.mod,
// the newest, and k8s/go.k8s1NN.mod for each older one), oldest first.
func k8sVersions(t *testing.T) [][2]string {
	t.Helper()
	files, err := filepath.Glob("../../k8s/go.k8s1*.mod")
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]string
	for _, f := range append(files, "../../k8s/go.mod") {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?m)^\s*k8s\.io/kubernetes\s+(v(1\.[0-9]+)\.\S+)`).FindSubmatch(b)
		if m == nil {
			t.Fatalf("%s requires no k8s.io/kubernetes", f)
		}
		out = append(out, [2]string{string(m[2]), string(m[1])})
	}
	slices.SortFunc(out, func(a, b [2]string) int { return semverMinor(a[0]) - semverMinor(b[0]) })
	return out
}

// semverMinor: 37 for "1.37".
func semverMinor(minor string) int {
	_, m, _ := strings.Cut(minor, ".")
	n := 0
	for _, c := range m {
		n = n*10 + int(c-'0')
	}
	return n
}

func moduleLine(t *testing.T, gomod string) string {
	t.Helper()
	b, err := os.ReadFile(gomod)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^module\s+(\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s: no module line", gomod)
	}
	return string(m[1])
}
