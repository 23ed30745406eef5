package cli

import (
	"bytes"
	"fmt"
	"io"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/experiment/outdir"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/scenario"
	"github.com/wattsched/wattsched/trace/alibaba2023"
	"github.com/wattsched/wattsched/userfile"
)

// scaleFlags are 'traces scale's flags (commands.go).
type scaleFlags struct {
	factor           int
	nodes, pods, out string
	force            bool
}

// cmdTracesScale writes a node or pod list repeated N times with renamed
// copies (the larger clusters of the scaling benchmarks).
func cmdTracesScale(f scaleFlags, stdout io.Writer) error {
	factor, nodes, pods, out := &f.factor, &f.nodes, &f.pods, &f.out
	switch {
	case *out == "":
		return usageError{fmt.Errorf("traces scale: -o FILE is required")}
	case (*nodes == "") == (*pods == ""):
		return usageError{fmt.Errorf("traces scale: give one of --nodes and --pods")}
	case *factor < 1 || *factor > alibaba2023.MaxScaleFactor:
		return usageError{fmt.Errorf("traces scale: --factor %d, want 1..%d", *factor, alibaba2023.MaxScaleFactor)}
	}
	if _, err := outdir.CheckFile(*out, f.force); err != nil {
		return fmt.Errorf("traces scale: %w", err)
	}
	var buf bytes.Buffer
	var done string
	if *nodes != "" {
		list, err := readNodeList(*nodes)
		if err != nil {
			return err
		}
		big, err := alibaba2023.RepeatNodes(list, *factor)
		if err != nil {
			return fmt.Errorf("traces scale: %s: %w", *nodes, err)
		}
		if err := alibaba2023.WriteNodes(&buf, big); err != nil {
			return err
		}
		done = fmt.Sprintf("%d nodes (%d x %d) in %s", len(big), *factor, len(list), *out)
	} else {
		list, err := readPodList(*pods)
		if err != nil {
			return err
		}
		big, err := alibaba2023.RepeatPods(list, *factor)
		if err != nil {
			return fmt.Errorf("traces scale: %s: %w", *pods, err)
		}
		if err := alibaba2023.WritePods(&buf, big); err != nil {
			return fmt.Errorf("traces scale: %s: %w", *pods, err)
		}
		done = fmt.Sprintf("%d pods (%d x %d) in %s", len(big), *factor, len(list), *out)
	}
	if err := outdir.WriteFile(*out, buf.Bytes(), f.force); err != nil {
		return fmt.Errorf("traces scale: %w", err)
	}
	fmt.Fprintln(stdout, done)
	return nil
}

// readNodeList reads an embedded node list by its scenario name or a CSV file.
func readNodeList(name string) ([]cluster.NodeSpec, error) {
	switch name {
	case scenario.NodesOpenBGPU:
		return alibaba2023.GPUNodes()
	case scenario.NodesOpenBAll:
		return alibaba2023.AllNodes()
	}
	f, err := userfile.Open(name, userfile.Table)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return alibaba2023.ReadNodes(f, name)
}

// readPodList reads an embedded pod list by its short name or a CSV file.
func readPodList(name string) ([]job.Task, error) {
	if scenario.EmbeddedPods(name) {
		return alibaba2023.Pods(name)
	}
	f, err := userfile.Open(name, userfile.Table)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return alibaba2023.ReadPods(f, name)
}
