//go:build zcprof

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
)

// A binary built with -tags zcprof profiles its daemon when ZEROCLAW_PPROF_DIR names a directory: a CPU profile
// (cpu.pprof) from start to exit, and at exit an allocation profile (allocs.pprof; every allocation sampled when ZEROCLAW_PPROF_ALLOCS=1, which slows it) and
// the allocation count (mallocs.txt). A normal build has none of this: the file is not compiled in, and the
// variable is then ignored. zcbench passes the variable through to the daemon it starts.
func init() {
	dir := os.Getenv("ZEROCLAW_PPROF_DIR")
	if dir == "" || len(os.Args) < 2 || os.Args[1] != "daemon" {
		return
	}
	if os.Getenv("ZEROCLAW_PPROF_ALLOCS") == "1" { // sample every allocation (slows the daemon: not for timing)
		runtime.MemProfileRate = 1
	}
	n := 0
	for {
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("cpu-%d.pprof", n))); err != nil {
			break
		}
		n++
	}
	cpu, err := os.Create(filepath.Join(dir, fmt.Sprintf("cpu-%d.pprof", n)))
	if err != nil {
		fmt.Fprintln(os.Stderr, "zcprof:", err)
		return
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		fmt.Fprintln(os.Stderr, "zcprof:", err)
		return
	}
	atExit = append(atExit, func() {
		pprof.StopCPUProfile()
		_ = cpu.Close()
		if f, err := os.Create(filepath.Join(dir, fmt.Sprintf("allocs-%d.pprof", n))); err == nil {
			_ = pprof.Lookup("allocs").WriteTo(f, 0)
			_ = f.Close()
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("mallocs-%d.txt", n)), fmt.Appendf(nil, "%d\n", ms.Mallocs), 0o644)
	})
}
