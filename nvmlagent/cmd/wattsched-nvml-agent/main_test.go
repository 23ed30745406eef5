package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

func TestHelpAndBadArguments(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"--help"}, &out, &out); err != nil || !strings.Contains(out.String(), "-listen") {
		t.Errorf("--help: %v, output %q", err, out.String())
	}
	if err := run([]string{"extra"}, &out, &out); err == nil || !strings.Contains(err.Error(), "unexpected arguments") {
		t.Errorf("extra argument: %v", err)
	}
	if err := run([]string{"--no-such-flag"}, &out, &out); err == nil {
		t.Error("unknown flag accepted")
	}
}

// --version prints wattsched's version (main.version, which the Makefile
// sets) and the go-nvml module, and touches no NVML: it works without a
// driver, and --nvml-library is not opened.
func TestVersion(t *testing.T) {
	defer func(v, r string) { version, revision = v, r }(version, revision)
	version, revision = "9.8.7", "abc123"
	var out, errs bytes.Buffer
	if err := run([]string{"--version", "--nvml-library", "/nonexistent/libnvidia-ml.so.1"}, &out, &errs); err != nil {
		t.Fatalf("--version: %v (%s)", err, errs.String())
	}
	line := out.String()
	if !strings.HasPrefix(line, "wattsched 9.8.7 wattsched-nvml-agent (revision abc123") || strings.Count(line, "\n") != 1 {
		t.Errorf("--version printed %q", line)
	}
	if errs.Len() != 0 {
		t.Errorf("--version wrote to stderr: %q", errs.String())
	}
}

// Without the NVIDIA driver the agent stops at once and says what is
// missing, instead of serving nothing.
func TestNoDriver(t *testing.T) {
	if ret := nvml.New().Init(); ret == nvml.SUCCESS {
		t.Skip("NVML is available here: the agent would serve")
	}
	var out bytes.Buffer
	err := run([]string{"--listen", "127.0.0.1:0", "--nvml-library", "/nonexistent/libnvidia-ml.so.1"}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "NVML init") || !strings.Contains(err.Error(), "NVIDIA driver") {
		t.Errorf("error %v, want NVML init and the driver named", err)
	}
}
