package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wattsched/wattsched/trace/alibaba2023"
)

// traces scale writes the node list repeated N times, readable as a node
// list; bad flags exit 2 and write nothing.
func TestTracesScale(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "nodes.csv")
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), []string{"traces", "scale", "--factor", "3", "--nodes", "openb-gpu", "-o", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	nodes, err := alibaba2023.ReadNodes(f, out)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 3*1213 || nodes[1213].Name != nodes[0].Name+"-x1" {
		t.Errorf("%d nodes, copy 1 starts %q", len(nodes), nodes[1213].Name)
	}
	bad := [][]string{
		{"traces", "scale", "--factor", "0", "--nodes", "openb-gpu", "-o"},
		{"traces", "scale", "--factor", "2", "--nodes", "openb-gpu", "--pods", "default", "-o"},
		{"traces", "scale", "--factor", "2", "-o"},
		{"traces", "scale", "--factor", "2", "--nodes", "openb-gpu"},
		{"traces", "bogus"},
	}
	for _, args := range bad {
		bout := filepath.Join(dir, "bad.csv")
		if args[len(args)-1] == "-o" {
			args = append(args, bout)
		}
		stderr.Reset()
		if code := Run(context.Background(), args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "traces") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message", args, code, stderr.String())
		}
		if _, err := os.Stat(bout); err == nil {
			t.Errorf("%v wrote %s", args, bout)
		}
	}
}
