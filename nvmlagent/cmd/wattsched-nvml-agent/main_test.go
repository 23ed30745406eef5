package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

func TestHelpAndBadArguments(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"--help"}, &out); err != nil || !strings.Contains(out.String(), "-listen") {
		t.Errorf("--help: %v, output %q", err, out.String())
	}
	if err := run([]string{"extra"}, &out); err == nil || !strings.Contains(err.Error(), "unexpected arguments") {
		t.Errorf("extra argument: %v", err)
	}
	if err := run([]string{"--no-such-flag"}, &out); err == nil {
		t.Error("unknown flag accepted")
	}
}

// Without the NVIDIA driver the agent stops at once and says what is
// missing, instead of serving nothing.
func TestNoDriver(t *testing.T) {
	if ret := nvml.New().Init(); ret == nvml.SUCCESS {
		t.Skip("NVML is available here: the agent would serve")
	}
	var out bytes.Buffer
	err := run([]string{"--listen", "127.0.0.1:0", "--nvml-library", "/nonexistent/libnvidia-ml.so.1"}, &out)
	if err == nil || !strings.Contains(err.Error(), "NVML init") || !strings.Contains(err.Error(), "NVIDIA driver") {
		t.Errorf("error %v, want NVML init and the driver named", err)
	}
}
