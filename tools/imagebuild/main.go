// Command imagebuild writes wattsched's four OCI images without a
// container engine, with go-containerregistry: kube-scheduler (with
// wattsched's plugins), wattsched (the CLI with HiGHS, for sweep Jobs),
// wattsched-nvml-agent and wattsched-shadow. Each image is a base layer made here from files
// (/etc/passwd and /etc/group with a non-root user 65532, the CA bundle,
// /tmp, the licences), for the agent a layer of the C libraries its dynamic
// binary loads, and a layer with the binary. Every file time is the commit's
// time, so two builds of one commit give the same digests.
//
// It runs from `make images`, which builds the binaries first:
//
//	imagebuild -o DIR -registry REG -version V -revision R -created T -source URL
//	  -ca-certs FILE -license FILE -highs-license FILE
//	  -wattsched BIN -kube-scheduler MINOR=BIN... -nvml-agent BIN -shadow BIN
//
// DIR gets, per image, an OCI layout NAME/ and a tarball NAME.tar of the
// image tagged REG/NAME:vV. kube-scheduler is one image per Kubernetes
// minor (-kube-scheduler once per minor, e.g. 1.37=bin/kube-scheduler-k8s1.37):
// REG/kube-scheduler:vV-k8sMINOR, in kube-scheduler-k8sMINOR/ and
// kube-scheduler-k8sMINOR.tar. This module is separate from wattsched's core so
// that the core needs neither go-containerregistry nor its dependencies.
package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image user: distroless's "nonroot", which the manifests' fsGroup and
// runAsNonRoot expect.
const (
	uid      = 65532
	userName = "nonroot"
	home     = "/home/nonroot"
)

// spec is one image.
type spec struct {
	name        string // the repository's last element
	tagSuffix   string // after vVERSION: -k8sMINOR for kube-scheduler
	description string
	bin         string // path of the binary on this machine
	static      bool   // refuse a dynamically linked binary
	licenses    string // SPDX expression for the label
	extra       []file // files beside the binary (licences of linked code)
}

// file is one entry of a layer.
type file struct {
	path string // absolute, in the image
	mode int64
	uid  int
	data []byte
	dir  bool
	link string // symlink target
}

type options struct {
	out, registry, version, revision, source string
	created                                  time.Time
	caCerts, license, highsLicense           string
	wattsched, nvmlAgent, shadow             string
	kubeSchedulers                           minorBins
}

// minorBins is the repeated -kube-scheduler MINOR=BIN flag: a binary per
// Kubernetes minor, in the order given.
type minorBins []minorBin

type minorBin struct{ minor, bin string }

func (m *minorBins) String() string {
	var parts []string
	for _, b := range *m {
		parts = append(parts, b.minor+"="+b.bin)
	}
	return strings.Join(parts, ",")
}

func (m *minorBins) Set(v string) error {
	minor, bin, ok := strings.Cut(v, "=")
	if !ok || !regexp.MustCompile(`^1\.[0-9]+$`).MatchString(minor) || bin == "" {
		return fmt.Errorf("%q: want MINOR=BIN, e.g. 1.37=bin/kube-scheduler-k8s1.37", v)
	}
	for _, b := range *m {
		if b.minor == minor {
			return fmt.Errorf("minor %s given twice", minor)
		}
	}
	*m = append(*m, minorBin{minor, bin})
	return nil
}

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "imagebuild:", err)
		os.Exit(1)
	}
}

func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("imagebuild", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	var created string
	fs.StringVar(&o.out, "o", "", "output folder: NAME/ (OCI layout) and NAME.tar per image")
	fs.StringVar(&o.registry, "registry", "", "repository prefix of the image names, e.g. ghcr.io/wattsched")
	fs.StringVar(&o.version, "version", "", "wattsched's version (internal/cli's Version); images are tagged vVERSION")
	fs.StringVar(&o.revision, "revision", "", "the commit the binaries were built from (40 hex digits, -dirty if the tree had changes)")
	fs.StringVar(&created, "created", "", "the commit's time, RFC 3339: the images' creation time and every file's time")
	fs.StringVar(&o.source, "source", "", "the source repository's URL (label org.opencontainers.image.source)")
	fs.StringVar(&o.caCerts, "ca-certs", "", "PEM bundle of CA certificates for /etc/ssl/certs/ca-certificates.crt")
	fs.StringVar(&o.license, "license", "", "wattsched's LICENSE file")
	fs.StringVar(&o.highsLicense, "highs-license", "", "the licence notices of the HiGHS library linked into wattsched")
	fs.StringVar(&o.wattsched, "wattsched", "", "the wattsched binary (static, with HiGHS)")
	fs.Var(&o.kubeSchedulers, "kube-scheduler", "MINOR=BIN: the kube-scheduler binary with wattsched's plugins (static) for Kubernetes MINOR; once per minor")
	fs.StringVar(&o.nvmlAgent, "nvml-agent", "", "the wattsched-nvml-agent binary (dynamic: it loads libnvidia-ml)")
	fs.StringVar(&o.shadow, "shadow", "", "the wattsched-shadow binary (static)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for _, f := range []struct{ name, v string }{{"o", o.out}, {"registry", o.registry}, {"version", o.version}, {"revision", o.revision},
		{"created", created}, {"source", o.source}, {"ca-certs", o.caCerts}, {"license", o.license}, {"highs-license", o.highsLicense},
		{"wattsched", o.wattsched}, {"kube-scheduler", o.kubeSchedulers.String()}, {"nvml-agent", o.nvmlAgent}, {"shadow", o.shadow}} {
		if f.v == "" {
			return fmt.Errorf("-%s is required", f.name)
		}
	}
	if !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(o.version) {
		return fmt.Errorf("-version %q: want MAJOR.MINOR.PATCH (internal/cli's Version)", o.version)
	}
	if !regexp.MustCompile(`^[0-9a-f]{40}(-dirty)?$`).MatchString(o.revision) {
		return fmt.Errorf("-revision %q: want a commit's 40 hex digits, with -dirty if the tree had changes", o.revision)
	}
	t, err := time.Parse(time.RFC3339, created)
	if err != nil {
		return fmt.Errorf("-created %q: %v", created, err)
	}
	o.created = t.UTC()
	if !strings.HasPrefix(o.source, "https://") {
		return fmt.Errorf("-source %q: want an https URL", o.source)
	}
	return build(o, stderr)
}

// build writes every image to a folder beside o.out, then puts it in place:
// a failure leaves o.out as it was.
func build(o options, stderr io.Writer) error {
	license, err := os.ReadFile(o.license)
	if err != nil {
		return err
	}
	highs, err := os.ReadFile(o.highsLicense)
	if err != nil {
		return err
	}
	var specs []spec
	for _, k := range o.kubeSchedulers {
		specs = append(specs, spec{name: "kube-scheduler", tagSuffix: "-k8s" + k.minor, bin: k.bin, static: true, licenses: "Apache-2.0",
			description: "kube-scheduler " + k.minor + " with wattsched's scheduling plugins"})
	}
	specs = append(specs, []spec{
		{name: "wattsched", description: "wattsched CLI with the HiGHS solver, for sweep Jobs", bin: o.wattsched, static: true, licenses: "Apache-2.0 AND MIT",
			extra: []file{{path: "/usr/share/doc/highs/LICENSE", mode: 0o644, data: highs}}},
		{name: "wattsched-nvml-agent", description: "GPU power from NVML in the DCGM exporter's metric names", bin: o.nvmlAgent, licenses: "Apache-2.0 AND LGPL-2.1-or-later"},
		{name: "wattsched-shadow", description: "wattsched's profiles in shadow mode beside a cluster's scheduler, binding nothing", bin: o.shadow, static: true, licenses: "Apache-2.0"},
	}...)
	base, err := baseFiles(o.caCerts, license)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Clean(o.out)), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(o.out)), ".images-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, s := range specs {
		dir := s.name + s.tagSuffix // kube-scheduler-k8s1.37, wattsched, ...
		img, err := image(s, base, o)
		if err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		ref, err := name.NewTag(o.registry + "/" + s.name + ":v" + o.version + s.tagSuffix)
		if err != nil {
			return fmt.Errorf("%s: image name: %w", dir, err)
		}
		if err := writeLayout(filepath.Join(tmp, dir), img, ref); err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		if err := tarball.WriteToFile(filepath.Join(tmp, dir+".tar"), ref, img); err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		d, err := img.Digest()
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "%s %s\n", ref, d)
	}
	// Readable by all (the layout's blobs are written 0600, index.json
	// 0755): whoever pushes them need not be the user who built them.
	err = filepath.WalkDir(tmp, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.Chmod(p, 0o755)
		}
		return os.Chmod(p, 0o644)
	})
	if err != nil {
		return err
	}
	if err := os.RemoveAll(o.out); err != nil {
		return err
	}
	return os.Rename(tmp, o.out)
}

func writeLayout(dir string, img v1.Image, ref name.Tag) error {
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	return p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref.String()}),
		layout.WithPlatform(v1.Platform{OS: cf.OS, Architecture: cf.Architecture}))
}

// baseFiles: the files every image has.
func baseFiles(caCerts string, license []byte) ([]file, error) {
	certs, err := os.ReadFile(caCerts)
	if err != nil {
		return nil, err
	}
	if !bytes.Contains(certs, []byte("-----BEGIN CERTIFICATE-----")) {
		return nil, fmt.Errorf("%s: no PEM certificate in it", caCerts)
	}
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n%s:x:%d:%d:%s:%s:/sbin/nologin\n", userName, uid, uid, userName, home)
	group := fmt.Sprintf("root:x:0:\nnobody:x:65534:\n%s:x:%d:\n", userName, uid)
	return []file{
		{path: "/etc/passwd", mode: 0o644, data: []byte(passwd)},
		{path: "/etc/group", mode: 0o644, data: []byte(group)},
		{path: "/etc/nsswitch.conf", mode: 0o644, data: []byte("passwd: files\ngroup: files\nhosts: files dns\n")},
		{path: "/etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: certs},
		{path: "/usr/share/doc/wattsched/LICENSE", mode: 0o644, data: license},
		{path: "/root", mode: 0o700, dir: true},
		{path: home, mode: 0o700, uid: uid, dir: true},
		{path: "/tmp", mode: 0o1777, dir: true},
	}, nil
}

// image: base layer, libraries (dynamic binaries only), binary.
func image(s spec, base []file, o options) (v1.Image, error) {
	bin, err := os.ReadFile(s.bin)
	if err != nil {
		return nil, err
	}
	ef, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return nil, fmt.Errorf("%s: not an ELF binary: %v", s.bin, err)
	}
	arch, ok := map[elf.Machine]string{elf.EM_X86_64: "amd64", elf.EM_AARCH64: "arm64"}[ef.Machine]
	if !ok {
		return nil, fmt.Errorf("%s: machine %v: want x86-64 or arm64", s.bin, ef.Machine)
	}
	interp := interpreter(ef)
	if s.static && interp != "" {
		return nil, fmt.Errorf("%s is dynamically linked (interpreter %s): build it with make (static)", s.bin, interp)
	}
	type layer struct {
		files     []file
		createdBy string
	}
	layers := []layer{{base, "wattsched base: /etc/passwd and /etc/group (user 65532), CA certificates, /tmp, licence"}}
	if interp != "" {
		libs, err := sharedLibraries(ef, interp, arch)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.bin, err)
		}
		layers = append(layers, layer{libs, "C libraries of " + s.name + " (" + interp + " and what it loads) from the build machine"})
	}
	binPath := "/" + s.name // where the Dockerfiles this replaces put it, and the manifests run it
	layers = append(layers, layer{append([]file{{path: binPath, mode: 0o755, data: bin}}, s.extra...), s.name + " built by make images"})

	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	for _, l := range layers {
		b, err := tarLayer(l.files, o.created)
		if err != nil {
			return nil, err
		}
		tl, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil },
			tarball.WithMediaType(types.OCILayer))
		if err != nil {
			return nil, err
		}
		img, err = mutate.Append(img, mutate.Addendum{Layer: tl, MediaType: types.OCILayer,
			History: v1.History{Created: v1.Time{Time: o.created}, CreatedBy: l.createdBy}})
		if err != nil {
			return nil, err
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	cf.Created = v1.Time{Time: o.created}
	cf.Config = v1.Config{
		Entrypoint: []string{binPath},
		User:       fmt.Sprintf("%d:%d", uid, uid),
		WorkingDir: home,
		Env:        []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"},
		Labels: map[string]string{
			"org.opencontainers.image.title":       s.name,
			"org.opencontainers.image.description": s.description,
			"org.opencontainers.image.version":     o.version,
			"org.opencontainers.image.revision":    o.revision,
			"org.opencontainers.image.source":      o.source,
			"org.opencontainers.image.created":     o.created.Format(time.RFC3339),
			"org.opencontainers.image.licenses":    s.licenses,
		},
	}
	return mutate.ConfigFile(img, cf)
}

// tarLayer writes files (and their parent folders, root-owned 0755) in path
// order with one time, so that the layer's bytes depend on its files only.
func tarLayer(files []file, t time.Time) ([]byte, error) {
	all := map[string]file{}
	for _, f := range files {
		if _, dup := all[f.path]; dup {
			return nil, fmt.Errorf("%s twice in one layer", f.path)
		}
		all[f.path] = f
	}
	for _, f := range files {
		for d := path.Dir(f.path); d != "/"; d = path.Dir(d) {
			if _, ok := all[d]; !ok {
				all[d] = file{path: d, mode: 0o755, dir: true}
			}
		}
	}
	paths := make([]string, 0, len(all))
	for p := range all {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range paths {
		f := all[p]
		h := &tar.Header{Name: strings.TrimPrefix(p, "/"), Mode: f.mode, Uid: f.uid, Gid: f.uid, ModTime: t, Format: tar.FormatPAX}
		switch {
		case f.dir:
			h.Typeflag, h.Name = tar.TypeDir, h.Name+"/"
		case f.link != "":
			h.Typeflag, h.Linkname = tar.TypeSymlink, f.link
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(f.data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func interpreter(ef *elf.File) string {
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			b, err := io.ReadAll(p.Open())
			if err == nil {
				return strings.TrimRight(string(b), "\x00")
			}
		}
	}
	return ""
}

// sharedLibraries: the dynamic loader at its path and every library the
// binary needs, transitively, found in the system's library folders and
// copied (symbolic links resolved) into /lib/TRIPLE/, a folder the loader
// searches by default.
func sharedLibraries(ef *elf.File, interp, arch string) ([]file, error) {
	triple := map[string]string{"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}[arch]
	if runtime.GOOS != "linux" {
		return nil, errors.New("the libraries of a dynamic binary are taken from this machine: build on Linux")
	}
	dirs := []string{"/lib/" + triple, "/usr/lib/" + triple, "/lib64", "/usr/lib64", "/lib", "/usr/lib"}
	libDir := "/lib/" + triple
	var out []file
	seen := map[string]bool{}
	queue, err := ef.ImportedLibraries()
	if err != nil {
		return nil, err
	}
	for len(queue) > 0 {
		lib := queue[0]
		queue = queue[1:]
		if seen[lib] {
			continue
		}
		seen[lib] = true
		var data []byte
		for _, d := range dirs {
			if b, err := os.ReadFile(filepath.Join(d, lib)); err == nil {
				data = b
				break
			}
		}
		if data == nil {
			return nil, fmt.Errorf("library %s not found in %s", lib, strings.Join(dirs, ", "))
		}
		out = append(out, file{path: libDir + "/" + lib, mode: 0o755, data: data})
		lf, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", lib, err)
		}
		more, err := lf.ImportedLibraries()
		if err != nil {
			return nil, fmt.Errorf("%s: %v", lib, err)
		}
		queue = append(queue, more...)
	}
	// The loader: a link to its copy in libDir when a library needs it by
	// name (glibc's libc.so.6 does), else the file itself.
	if seen[path.Base(interp)] {
		rel, err := filepath.Rel(path.Dir(interp), libDir+"/"+path.Base(interp))
		if err != nil {
			return nil, err
		}
		out = append(out, file{path: interp, mode: 0o777, link: rel})
	} else {
		b, err := os.ReadFile(interp)
		if err != nil {
			return nil, fmt.Errorf("dynamic loader: %v", err)
		}
		out = append(out, file{path: interp, mode: 0o755, data: b})
	}
	// glibc's licence notice, where the machine has Debian's.
	if b, err := os.ReadFile("/usr/share/doc/libc6/copyright"); err == nil {
		out = append(out, file{path: "/usr/share/doc/libc6/copyright", mode: 0o644, data: b})
	}
	// The NVIDIA container runtime adds the driver's libraries and runs
	// ldconfig, which reads this file and the folder it includes.
	out = append(out, file{path: "/etc/ld.so.conf", mode: 0o644, data: []byte("include /etc/ld.so.conf.d/*.conf\n")},
		file{path: "/etc/ld.so.conf.d", mode: 0o755, dir: true})
	return out, nil
}
