// Command wattsched runs energy-aware GPU-cluster scheduling experiments.
package main

import (
	"context"
	"os"

	"github.com/wattsched/wattsched/internal/cli"
)

func main() {
	cli.HandleSignals(os.Stderr)
	os.Exit(cli.Run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}
