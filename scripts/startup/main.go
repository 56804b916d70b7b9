// Command startup measures the daemon's socket-ready latency after exec and its idle resident memory.
//
//	CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /tmp/zeroclaw ./cmd/zeroclaw && go run ./scripts/startup -bin /tmp/zeroclaw
//
// It starts the binary on a fresh temporary install, polls the socket until a connect succeeds, waits for the
// daemon to settle, then reads VmRSS from /proc. Targets (issue 2): ready ≤ 100 ms, idle RSS ≤ 15 MB.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

func main() {
	bin := flag.String("bin", "./zeroclaw", "path to the zeroclaw binary")
	runs := flag.Int("runs", 5, "number of fresh starts to measure")
	settle := flag.Duration("settle", time.Second, "idle time before reading RSS")
	flag.Parse()
	var ready []time.Duration
	var rss, anon []int
	for i := 0; i < *runs; i++ {
		r, m, a, err := once(*bin, *settle)
		if err != nil {
			fmt.Fprintln(os.Stderr, "startup:", err)
			os.Exit(1)
		}
		ready = append(ready, r)
		rss = append(rss, m)
		anon = append(anon, a)
	}
	sort.Slice(ready, func(i, j int) bool { return ready[i] < ready[j] })
	sort.Ints(rss)
	sort.Ints(anon)
	fmt.Printf("socket ready after exec: median %v (min %v, max %v) over %d fresh installs\n",
		ready[len(ready)/2].Round(100*time.Microsecond), ready[0].Round(100*time.Microsecond),
		ready[len(ready)-1].Round(100*time.Microsecond), len(ready))
	fmt.Printf("idle RSS: median %.1f MB (min %.1f, max %.1f), of which anonymous %.1f MB (the rest is the mapped binary)\n",
		float64(rss[len(rss)/2])/1024, float64(rss[0])/1024, float64(rss[len(rss)-1])/1024, float64(anon[len(anon)/2])/1024)
}

func once(bin string, settle time.Duration) (time.Duration, int, int, error) {
	home, err := os.MkdirTemp("", "zcs")
	if err != nil {
		return 0, 0, 0, err
	}
	defer os.RemoveAll(home)
	sock := filepath.Join(home, ".zeroclaw", "data", "daemon.sock")
	cmd := exec.Command(bin, "daemon", "--log-level", "warn")
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, 0, err
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}()
	var ready time.Duration
	for {
		if c, err := net.Dial("unix", sock); err == nil {
			ready = time.Since(start)
			c.Close()
			break
		}
		if time.Since(start) > 10*time.Second {
			return 0, 0, 0, fmt.Errorf("socket not ready after 10s")
		}
		time.Sleep(200 * time.Microsecond)
	}
	time.Sleep(settle)
	kb, err := statusKB(cmd.Process.Pid, "VmRSS:")
	if err != nil {
		return 0, 0, 0, err
	}
	anon, err := statusKB(cmd.Process.Pid, "RssAnon:")
	return ready, kb, anon, err
}

// statusKB reads one "<field> N kB" line of /proc/<pid>/status.
func statusKB(pid int, field string) (int, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field); ok {
			var kb int
			_, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb)
			return kb, err
		}
	}
	return 0, fmt.Errorf("no %s for pid %d", field, pid)
}
