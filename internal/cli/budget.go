package cli

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/wattsched/wattsched/experiment"
)

// fallbackMemoryBytes is the machine's memory assumed where
// /proc/meminfo cannot be read (not Linux): 8 GiB, so the default limit
// is 4 GiB.
const fallbackMemoryBytes = 8 << 30

// maxMemoryFlag registers --max-memory on a run, compare or reproduce
// command line.
func maxMemoryFlag(fs *pflag.FlagSet) *string {
	return fs.String("max-memory", "", "refuse, before any work, a run estimated to need more memory than this (e.g. 4GiB, 500MB; default: half the machine's memory, docs/reliability.md)")
}

// maxMemory is the limit --max-memory gives: the flag's size, or half the
// machine's memory: MemTotal of /proc/meminfo, or the cgroup v2 limit
// (/sys/fs/cgroup/memory.max) of a container when that is lower;
// fallbackMemoryBytes where neither can be read.
func maxMemory(spec string) (int64, error) {
	if spec == "" {
		total := int64(fallbackMemoryBytes)
		if b, err := os.ReadFile("/proc/meminfo"); err == nil {
			if t, err := memTotal(string(b)); err == nil {
				total = t
			}
		}
		if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
			if c, ok := cgroupMax(string(b)); ok && c < total {
				total = c
			}
		}
		return total / 2, nil
	}
	b, err := experiment.ParseBytes(spec)
	if err != nil {
		return 0, usageError{fmt.Errorf("--max-memory: %w", err)}
	}
	return b, nil
}

// cgroupMax reads a cgroup v2 memory.max file: a number of bytes, or
// "max" (no limit: ok false).
func cgroupMax(s string) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	return n, err == nil && n > 0
}

// memTotal reads the MemTotal line of /proc/meminfo ("MemTotal: 24567 kB")
// in bytes.
func memTotal(meminfo string) (int64, error) {
	sc := bufio.NewScanner(strings.NewReader(meminfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 || f[0] != "MemTotal:" || f[2] != "kB" {
			continue
		}
		kb, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil || kb <= 0 || kb > 1<<53 {
			return 0, fmt.Errorf("meminfo: MemTotal %q, want a positive number of kB", f[1])
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("meminfo: no MemTotal line in kB")
}
