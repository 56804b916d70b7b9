// Command zcbench measures a built zeroclaw binary beside floors measured in the same run (a raw NDJSON echo
// server, reading the fake model server directly, a bare SQLite insert loop, raw socket writes, bare net/http),
// and runs the chaos harness that kill -9s the daemon under load and checks that no acknowledged write is lost.
//
//	go run ./cmd/zcbench [-bin PATH] [-out DIR] [-runs N]
//	go run ./cmd/zcbench chaos [-bin PATH] [-duration 60s] [-seed N] [-clients N]
//	go run ./cmd/zcbench soak [-bin PATH] [-duration 5m] [-sample 1m] [-out DIR]
//
// Without -bin it builds the binary with the README's command (buildCommand: a static, stripped build) from the
// module it runs in. Everything it starts listens on a Unix socket or on 127.0.0.1 and stops by itself.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

func main() {
	if path := os.Getenv(echoFloorEnv); path != "" {
		os.Exit(serveEchoFloor(path))
	}
	if body := os.Getenv(httpFloorEnv); body != "" {
		os.Exit(serveHTTPFloor(body))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the command: exit code 0 when every target and invariant holds, 1 when one does not, 2 on a usage or
// harness error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "chaos" {
		return runChaos(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "soak" {
		return runSoak(ctx, args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("zcbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bin := fs.String("bin", "", "zeroclaw binary to measure (default: build it with go build)")
	out := fs.String("out", "", "directory for bench.json and bench.md (default: none, the table goes to stdout only)")
	runs := fs.Int("runs", 3, "runs; each row shows the median and the min–max over them")
	quick := fs.Bool("quick", false, "shorter loops, for a smoke test of the harness")
	only := fs.String("sections", "", "comma-separated sections to run (default: all; startup always runs, it starts the daemon): "+sectionNames())
	if err := fs.Parse(args); err != nil {
		return 2
	}
	chosen, err := chooseSections(*only)
	if err != nil {
		fmt.Fprintln(stderr, "zcbench:", err)
		return 2
	}
	if *runs < 1 {
		fmt.Fprintln(stderr, "zcbench: -runs must be at least 1")
		return 2
	}
	path, cleanup, err := binary(ctx, *bin, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "zcbench:", err)
		return 2
	}
	defer cleanup()
	res := newResults()
	started := time.Now().UTC()
	loadBefore := loadavg()
	for i := 1; i <= *runs; i++ {
		if err := runOnce(ctx, path, i, res, stderr, *quick, chosen); err != nil {
			fmt.Fprintln(stderr, "zcbench:", err)
			return 2
		}
	}
	res.summarize()
	var table strings.Builder
	res.writeTable(&table, *runs)
	fmt.Fprint(stdout, table.String())
	failed := res.failed()
	fmt.Fprintf(stdout, "\n%d of the rows with a target missed it.\n", failed)
	if *out != "" {
		m := describeMachine()
		m.LoadBefore, m.LoadAfter = loadBefore, loadavg()
		built := "given with -bin"
		if *bin == "" {
			built = "built by zcbench with " + buildCommand("DIR/zeroclaw") + " (the README's command)"
		}
		rep := report{Command: "go run ./cmd/zcbench " + strings.Join(args, " "), Started: started, Runs: *runs, Machine: m,
			Binary: built, Metrics: res.metrics(), Failed: failed}
		if err := os.MkdirAll(*out, 0o755); err != nil {
			fmt.Fprintln(stderr, "zcbench:", err)
			return 2
		}
		f, err := os.Create(filepath.Join(*out, "bench.json"))
		if err == nil {
			err = writeJSON(f, rep)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(*out, "bench.md"), []byte(header(rep)+table.String()), 0o644)
		}
		if err != nil {
			fmt.Fprintln(stderr, "zcbench:", err)
			return 2
		}
	}
	if failed > 0 {
		return 1
	}
	return 0
}

// binary returns the binary to measure: -bin as given, or one built now into a temp dir with the README's
// build command.
func binary(ctx context.Context, bin string, log io.Writer) (string, func(), error) {
	if bin != "" {
		abs, err := filepath.Abs(bin)
		if err != nil {
			return "", nil, err
		}
		if _, err := os.Stat(abs); err != nil {
			return "", nil, fmt.Errorf("-bin: %w", err)
		}
		return abs, func() {}, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return "", nil, fmt.Errorf("no -bin given and %w", err)
	}
	dir, err := os.MkdirTemp("", "zcbench-bin")
	if err != nil {
		return "", nil, err
	}
	out := filepath.Join(dir, "zeroclaw")
	fmt.Fprintln(log, "zcbench: building", buildCommand(out))
	cmd := exec.CommandContext(ctx, "go", buildArgs(out)...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, log, log
	cmd.Env = append(os.Environ(), buildEnv)
	if err := cmd.Run(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("go build: %w", err)
	}
	return out, func() { os.RemoveAll(dir) }, nil
}

// buildEnv and buildArgs are the README's build command ("To build the binary"), which a test keeps equal to it:
// a static binary (no cgo: the "one static binary" the README promises, and no libc or ld.so mapped), without
// local paths and without the symbol table and DWARF, which only debuggers read.
const buildEnv = "CGO_ENABLED=0"

func buildArgs(out string) []string {
	return []string{"build", "-trimpath", "-ldflags=-s -w", "-o", out, "./cmd/zeroclaw"}
}

// buildCommand is the build command as a shell line.
func buildCommand(out string) string {
	line := buildEnv + " go"
	for _, a := range buildArgs(out) {
		if strings.ContainsAny(a, " '") {
			a = "'" + a + "'"
		}
		line += " " + a
	}
	return line
}

// moduleRoot finds the directory of the go.mod that declares this module, from the working directory up.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/zeroclaw-go/zeroclaw\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("the working directory is not inside the zeroclaw module: pass -bin")
		}
		dir = parent
	}
}

// machine describes where the numbers were taken.
type machine struct {
	OS     string `json:"os"`
	Arch   string `json:"arch"`
	CPUs   int    `json:"cpus"`
	CPU    string `json:"cpu"`
	Memory string `json:"memory"`
	Kernel string `json:"kernel"`
	Go     string `json:"go"`

	LoadBefore string `json:"load_before"` // /proc/loadavg when the run started and ended: the machine is shared
	LoadAfter  string `json:"load_after"`
}

// loadavg is the first three fields of /proc/loadavg.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

// header is what bench.md says above the table: when, where and how it was measured.
func header(rep report) string {
	m := rep.Machine
	return fmt.Sprintf("- Command: `%s`\n- Started: %s\n- Machine: %s/%s, %d CPUs (%s), %s memory, kernel %s, %s\n"+
		"- Load average (1, 5, 15 min) at the start: %s; at the end: %s\n- Binary: %s\n\n",
		rep.Command, rep.Started.Format(time.RFC3339), m.OS, m.Arch, m.CPUs, m.CPU, m.Memory, m.Kernel, m.Go,
		m.LoadBefore, m.LoadAfter, rep.Binary)
}

func describeMachine() machine {
	m := machine{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), Go: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				m.CPU = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		first, _, _ := strings.Cut(string(b), "\n")
		var kb int64
		if _, err := fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(first, "MemTotal:")), "%d kB", &kb); err == nil {
			m.Memory = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}
