package main

import (
	"context"
	"fmt"
	"io"
)

// runChaos is the chaos harness (next commit).
func runChaos(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "zcbench chaos: not implemented yet")
	return 2
}
