package main

import (
	"context"
	"debug/elf"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// section is one group of rows. Sections run in registry order against the run's daemon; a section whose
// surface the daemon lacks marks its rows "n/a" (found through initialize's capabilities or a probe, never
// assumed), so sections for surfaces still being built (the gateway) can be registered before they exist.
type section struct {
	name string
	run  func(b *bench) error
}

// registry lists the sections zcbench runs; add one to measure a new surface.
var registry = []section{
	{"binary", benchBinary},
	{"startup", benchStartup},
	{"connections", benchConnections},
	{"status", benchStatus},
	{"streaming", benchStreaming},
	{"appends", benchAppends},
	{"uploads", benchUploads},
	{"memory", benchMemory},
	{"migration", benchMigration},
	{"gateway", benchGateway},
	{"load", benchLoad},
	{"sops", benchSops},
	{"channels", benchChannels},
}

// sectionNames lists the registry's names for -sections' help.
func sectionNames() string {
	names := make([]string, len(registry))
	for i, s := range registry {
		names[i] = s.name
	}
	return strings.Join(names, ",")
}

// chooseSections is the registry filtered by -sections (empty: all of it), in registry order; startup is
// always kept because it starts the daemon the other sections measure.
func chooseSections(list string) ([]section, error) {
	if strings.TrimSpace(list) == "" {
		return registry, nil
	}
	want := map[string]bool{"startup": true}
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		known := false
		for _, s := range registry {
			known = known || s.name == name
		}
		if !known {
			return nil, fmt.Errorf("-sections: no section %q (there are %s)", name, sectionNames())
		}
		want[name] = true
	}
	var out []section
	for _, s := range registry {
		if want[s.name] {
			out = append(out, s)
		}
	}
	return out, nil
}

// bench is the state of one run: the daemon every section measures, and the floors beside it.
type bench struct {
	ctx     context.Context
	bin     string
	run     int
	res     *results
	log     io.Writer
	tmp     string // short temp dir for floor sockets and files
	in      *install
	d       *proc
	caps    map[string]bool
	sseURL  string
	gwPort  int
	quick   bool // shorter loops (the test's smoke run)
	echo    string
	sink    string
	servers []*server
}

func (b *bench) logf(format string, args ...any) { fmt.Fprintf(b.log, format+"\n", args...) }

// scale shortens loop counts and durations for a quick run.
func (b *bench) n(full int) int {
	if b.quick {
		return max(1, full/10)
	}
	return full
}

func (b *bench) dur(full time.Duration) time.Duration {
	if b.quick {
		return full / 5
	}
	return full
}

// has reports whether the daemon lists method in its capabilities.
func (b *bench) has(methods ...string) (bool, string) {
	for _, m := range methods {
		if !b.caps[m] {
			return false, "not built yet: initialize lists no " + m
		}
	}
	return true, ""
}

// freePort picks a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// runOnce runs every section once on a fresh install and daemon.
func runOnce(ctx context.Context, bin string, run int, res *results, log io.Writer, quick bool, sections []section) (err error) {
	b := &bench{ctx: ctx, bin: bin, run: run, res: res, log: log, quick: quick}
	if b.tmp, err = os.MkdirTemp("", "zcbf"); err != nil {
		return err
	}
	defer os.RemoveAll(b.tmp)
	sse, url, err := sseServer()
	if err != nil {
		return err
	}
	defer sse.Close()
	b.sseURL = url
	if b.gwPort, err = freePort(); err != nil {
		return err
	}
	echo, echoPath, err := startEchoProcess(b.tmp)
	if err != nil {
		return err
	}
	defer echo.stop()
	sink, sinkPath, err := sinkFloor(b.tmp)
	if err != nil {
		return err
	}
	b.echo, b.sink, b.servers = echoPath, sinkPath, []*server{sink}
	defer func() {
		for _, s := range b.servers {
			s.close()
		}
		if b.d != nil {
			if serr := b.d.stop(); serr != nil && err == nil {
				err = serr
			}
		}
		if b.in != nil {
			b.in.remove()
		}
	}()
	for _, s := range sections {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		start := time.Now()
		if err := s.run(b); err != nil {
			return fmt.Errorf("run %d, section %s: %w", run, s.name, err)
		}
		b.logf("run %d: %s done in %s", run, s.name, time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// benchBinary: the size of the file measured and of the same file stripped.
func benchBinary(b *bench) error {
	fi, err := os.Stat(b.bin)
	if err != nil {
		return err
	}
	const mb = 1 << 20
	b.res.add("binary", "size as built", "MB", noTarget(), float64(fi.Size())/mb)
	if f, err := elf.Open(b.bin); err == nil {
		if f.Section(".symtab") == nil {
			b.res.note("binary", "size as built", "already stripped")
		}
		f.Close()
	}
	strip, err := exec.LookPath("strip")
	if err != nil {
		b.res.na("binary", "size stripped", "MB", maxValue(20, "≤ 20 MB"), "no strip(1) on this machine")
		return nil
	}
	out := filepath.Join(b.tmp, "stripped")
	if msg, err := exec.Command(strip, "-o", out, b.bin).CombinedOutput(); err != nil {
		return fmt.Errorf("strip: %v: %s", err, msg)
	}
	sfi, err := os.Stat(out)
	if err != nil {
		return err
	}
	b.res.add("binary", "size stripped", "MB", maxValue(20, "≤ 20 MB"), float64(sfi.Size())/mb)
	if err := os.Remove(out); err != nil {
		return err
	}
	in, err := measureInit(b.bin)
	if err != nil {
		return err
	}
	b.res.add("binary", "package init, allocations", "allocs", maxValue(2000, "≤ 2,000"), float64(in.allocs))
	b.res.add("binary", "package init, heap", "KB", noTarget(), float64(in.bytes)/1024)
	return nil
}

// benchStartup: exec → socket ready on a fresh install and on the same install again; idle RSS. The second
// daemon stays up for the sections after this one.
func benchStartup(b *bench) error {
	in, err := newInstall(installOptions{sseURL: b.sseURL, maxConnections: 1100, gatewayPort: b.gwPort})
	if err != nil {
		return err
	}
	b.in = in
	d, err := startDaemon(b.bin, in)
	if err != nil {
		return err
	}
	fresh, freshServed := d.ready, d.served
	if err := d.stop(); err != nil {
		return err
	}
	if b.d, err = startDaemon(b.bin, in); err != nil {
		return err
	}
	ms := func(t time.Duration) float64 { return float64(t) / float64(time.Millisecond) }
	b.res.add("startup", "exec → socket ready, fresh install", "ms", maxValue(50, "≤ 50 ms"), ms(fresh))
	b.res.add("startup", "exec → socket ready, existing install", "ms", maxValue(50, "≤ 50 ms"), ms(b.d.ready))
	b.res.add("startup", "exec → first status answered, fresh install", "ms", noTarget(), ms(freshServed))
	b.res.add("startup", "exec → first status answered, existing install", "ms", noTarget(), ms(b.d.served))
	c, init, err := dialInit(in.sock)
	if err != nil {
		return err
	}
	b.caps = capabilities(init)
	c.Close()
	time.Sleep(b.dur(time.Second)) // let the start-up garbage settle before reading RSS
	rss, err := rssKB(b.d.pid(), "VmRSS:")
	if err != nil {
		return err
	}
	anon, err := rssKB(b.d.pid(), "RssAnon:")
	if err != nil {
		return err
	}
	b.res.add("startup", "idle RSS", "MB", maxValue(12, "≤ 12 MB"), float64(rss)/1024)
	b.res.add("startup", "idle RSS, anonymous part", "MB", noTarget(), float64(anon)/1024)
	return nil
}
