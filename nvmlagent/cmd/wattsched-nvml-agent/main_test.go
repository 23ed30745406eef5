package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
)

func TestHelpAndBadArguments(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"--help"}, &out, &out, nvml.New); err != nil || !strings.Contains(out.String(), "-listen") {
		t.Errorf("--help: %v, output %q", err, out.String())
	}
	if err := run([]string{"extra"}, &out, &out, nvml.New); err == nil || !strings.Contains(err.Error(), "unexpected arguments") {
		t.Errorf("extra argument: %v", err)
	}
	if err := run([]string{"--no-such-flag"}, &out, &out, nvml.New); err == nil {
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
	if err := run([]string{"--version", "--nvml-library", "/nonexistent/libnvidia-ml.so.1"}, &out, &errs, func(...nvml.LibraryOption) nvml.Interface {
		t.Fatal("--version opened NVML")
		return nil
	}); err != nil {
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
	err := run([]string{"--listen", "127.0.0.1:0", "--nvml-library", "/nonexistent/libnvidia-ml.so.1"}, &out, &out, nvml.New)
	if err == nil || !strings.Contains(err.Error(), "NVML init") || !strings.Contains(err.Error(), "NVIDIA driver") {
		t.Errorf("error %v, want NVML init and the driver named", err)
	}
}

// fakeNVML is go-nvml's mock of a DGX A100 server as the library the
// agent opens, recording the options it was opened with and whether it
// was shut down, with NVML's error strings for the codes it returns.
func fakeNVML(t *testing.T, change func(*dgxa100.Server)) (openNVML, *[]nvml.LibraryOption, *bool) {
	t.Helper()
	s := dgxa100.New()
	s.ErrorStringFunc = func(r nvml.Return) string {
		return map[nvml.Return]string{nvml.ERROR_LIBRARY_NOT_FOUND: "ERROR_LIBRARY_NOT_FOUND", nvml.ERROR_GPU_IS_LOST: "ERROR_GPU_IS_LOST"}[r]
	}
	shut := false
	s.ShutdownFunc = func() nvml.Return { shut = true; return nvml.SUCCESS }
	change(s)
	var opts []nvml.LibraryOption
	return func(o ...nvml.LibraryOption) nvml.Interface { opts = o; return s }, &opts, &shut
}

// The agent reads the library it is given (no global): a library that
// cannot start stops the agent with NVML's error and the driver named; a
// GPU lost while the devices are listed stops it with the error, and the
// library is shut down; --nvml-library reaches the library.
func TestInjectedNVML(t *testing.T) {
	open, opts, shut := fakeNVML(t, func(s *dgxa100.Server) {
		s.InitFunc = func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }
	})
	var out bytes.Buffer
	err := run([]string{"--listen", "127.0.0.1:0", "--hostname", "n", "--nvml-library", "/opt/nvidia/libnvidia-ml.so.1"}, &out, &out, open)
	if err == nil || !strings.Contains(err.Error(), "NVML init: ERROR_LIBRARY_NOT_FOUND (is the NVIDIA driver installed") {
		t.Errorf("init failure: error %v", err)
	}
	if len(*opts) != 1 {
		t.Errorf("opened with %d options, want 1 (the library path)", len(*opts))
	}
	if *shut {
		t.Error("shut down a library that did not start")
	}

	open, _, shut = fakeNVML(t, func(s *dgxa100.Server) {
		s.DeviceGetHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
			if i == 3 {
				return nil, nvml.ERROR_GPU_IS_LOST
			}
			return s.Devices[i], nvml.SUCCESS
		}
	})
	err = run([]string{"--listen", "127.0.0.1:0", "--hostname", "n"}, &out, &out, open)
	if err == nil || err.Error() != "NVML device 3: ERROR_GPU_IS_LOST" {
		t.Errorf("lost GPU: error %v, want NVML device 3: ERROR_GPU_IS_LOST", err)
	}
	if !*shut {
		t.Error("the library was not shut down after the failure")
	}
}
