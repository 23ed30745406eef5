package main

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bad input: one error naming the flag or file, and nothing written.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "images")
	good := func() map[string]string {
		return map[string]string{"o": out, "registry": "example.com/w", "version": "1.2.3", "revision": strings.Repeat("a", 40),
			"created": "2026-01-02T03:04:05Z", "source": "https://example.com/w", "ca-certs": "/dev/null", "license": "/dev/null",
			"highs-license": "/dev/null", "wattsched": "/bin/sh", "kube-scheduler": "1.37=/bin/sh", "nvml-agent": "/bin/sh", "shadow": "/bin/sh"}
	}
	args := func(m map[string]string) []string {
		var a []string
		for k, v := range m {
			a = append(a, "-"+k, v)
		}
		return a
	}
	certs := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(certs, []byte("-----BEGIN CERTIFICATE-----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		set  map[string]string
		want string
	}{
		{map[string]string{"version": ""}, "-version is required"},
		{map[string]string{"version": "v1.2"}, `-version "v1.2"`},
		{map[string]string{"revision": "main"}, `-revision "main"`},
		{map[string]string{"created": "yesterday"}, `-created "yesterday"`},
		{map[string]string{"source": "github.com/w"}, "want an https URL"},
		{map[string]string{"ca-certs": "/dev/null"}, "no PEM certificate"},
		{map[string]string{"ca-certs": certs, "kube-scheduler": "1.37=/nonexistent/kube-scheduler"}, "/nonexistent/kube-scheduler"},
		// One image per minor: the binary must say which minor it is for.
		{map[string]string{"ca-certs": certs, "kube-scheduler": "/bin/sh"}, "want MINOR=BIN"},
		{map[string]string{"ca-certs": certs, "kube-scheduler": "v1.37=/bin/sh"}, "want MINOR=BIN"},
		// /bin/sh is dynamically linked: refused where the image has no libc.
		{map[string]string{"ca-certs": certs}, "/bin/sh is dynamically linked"},
	} {
		m := good()
		for k, v := range c.set {
			m[k] = v
		}
		err := run(args(m), io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.set, err, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("%v: %s written", c.set, out)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, ".images-*")); len(left) > 0 {
			t.Fatalf("%v: left %v", c.set, left)
		}
	}
}

// A minor given twice is refused (two images of one tag).
func TestKubeSchedulerMinorTwice(t *testing.T) {
	var m minorBins
	if err := m.Set("1.37=a"); err != nil {
		t.Fatal(err)
	}
	if err := m.Set("1.37=b"); err == nil || !strings.Contains(err.Error(), "minor 1.37 given twice") {
		t.Errorf("error %v, want minor 1.37 given twice", err)
	}
}

// Two builds of the same inputs give the same bytes (every time is the
// commit's), and another commit time gives another image.
func TestReproducible(t *testing.T) {
	dir := t.TempDir()
	// A minimal static x86-64 ELF file (a header, no program headers):
	// all the builder reads of a binary.
	static := filepath.Join(dir, "static")
	var h bytes.Buffer
	h.Write([]byte{0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	for _, v := range []any{uint16(2), uint16(62), uint32(1), uint64(0), uint64(0), uint64(0), uint32(0),
		uint16(64), uint16(56), uint16(0), uint16(64), uint16(0), uint16(0)} {
		if err := binary.Write(&h, binary.LittleEndian, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(static, h.Bytes(), 0o755); err != nil {
		t.Fatal(err)
	}
	certs := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(certs, []byte("-----BEGIN CERTIFICATE-----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	index := func(out, created string) string {
		t.Helper()
		err := run([]string{"-o", filepath.Join(dir, out), "-registry", "example.com/w", "-version", "1.2.3", "-revision", strings.Repeat("b", 40),
			"-created", created, "-source", "https://example.com/w", "-ca-certs", certs, "-license", certs, "-highs-license", certs,
			"-wattsched", static, "-kube-scheduler", "1.36=" + static, "-kube-scheduler", "1.37=" + static, "-nvml-agent", static, "-shadow", static}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		var all []byte
		for _, name := range []string{"kube-scheduler-k8s1.36", "kube-scheduler-k8s1.37", "wattsched", "wattsched-nvml-agent", "wattsched-shadow"} {
			b, err := os.ReadFile(filepath.Join(dir, out, name, "index.json"))
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, b...)
		}
		return string(all)
	}
	a, b := index("a", "2026-01-02T03:04:05Z"), index("b", "2026-01-02T03:04:05Z")
	// One kube-scheduler image per minor, tagged vVERSION-k8sMINOR.
	for _, minor := range []string{"1.36", "1.37"} {
		if want := `"example.com/w/kube-scheduler:v1.2.3-k8s` + minor + `"`; !strings.Contains(a, want) {
			t.Errorf("no image named %s in the layouts:\n%s", want, a)
		}
	}
	if a != b {
		t.Errorf("two builds differ:\n%s\n%s", a, b)
	}
	if c := index("c", "2026-01-02T03:04:06Z"); c == a {
		t.Error("another commit time gave the same images")
	}
}
