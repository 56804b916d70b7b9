package trigger

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/sop"
)

// DefaultMaxWatches bounds the directories one filesystem source watches (each is a kernel watch).
const DefaultMaxWatches = 1024

// broadRoots may be watched only with allow_broad_roots (upstream's list).
var broadRoots = []string{"/", "/home", "/etc", "/var", "/proc", "/sys", "/dev", "/tmp"}

// FSOptions configure a filesystem source.
type FSOptions struct {
	// Root is the install root: SOP filesystem triggers may always watch below it.
	Root string
	Home string
	// Channels are the channels.filesystem entries; the enabled ones are watched, and SOP triggers may watch
	// below their paths too.
	Channels map[string]config.FilesystemConfig
	// Patterns returns the path patterns of the loaded SOPs' filesystem triggers (read at start and after
	// Changed). A pattern outside Root and the channels' paths is refused (logged), not watched.
	Patterns   func() []string
	Dispatcher Dispatcher
	PayloadMax int // [sop] untrusted_payload_max_bytes
	MaxWatches int // 0: DefaultMaxWatches
	MaxPending int // events waiting to settle; 0: DefaultMaxPendingFS
	// RootConfig is the debounce, settle and symlink settings of the watches below Root (nil: upstream's
	// channel defaults).
	RootConfig *config.FilesystemConfig
	Logger     *slog.Logger
}

// FS watches the directories SOP filesystem triggers name and dispatches each change as a filesystem event:
// topic the path, payload {"event", "path", "file_name", "extension", "size", "modified"}. Repeated changes
// of one path and kind within the debounce window are one event, dispatched once the settle time passed.
type FS struct {
	o   FSOptions
	log *slog.Logger

	changed chan struct{}

	mu      sync.Mutex // guards watched
	watched map[string]bool
}

// NewFS returns the source; Run watches.
func NewFS(o FSOptions) *FS {
	if o.MaxWatches <= 0 {
		o.MaxWatches = DefaultMaxWatches
	}
	lg := o.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	return &FS{o: o, log: lg.With("component", "sop-fs"), changed: make(chan struct{}, 1), watched: map[string]bool{}}
}

// Changed re-reads the patterns (after a reload).
func (f *FS) Changed() {
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// allowed is where a watch may be: below the install root, or below an enabled channel's path (a broad root
// itself only with that channel's allow_broad_roots).
type allowed struct {
	dir   string
	broad bool
	cfg   config.FilesystemConfig
}

func (f *FS) expand(p string) string {
	p = strings.TrimSpace(p)
	if p == "~" {
		return f.o.Home
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok && f.o.Home != "" {
		return filepath.Join(f.o.Home, rest)
	}
	return p
}

func (f *FS) roots() []allowed {
	rc := defaultFSConfig()
	if f.o.RootConfig != nil {
		rc = *f.o.RootConfig
	}
	out := []allowed{{dir: realDir(f.o.Root), cfg: rc}}
	for _, alias := range sortedAliases(f.o.Channels) {
		c := f.o.Channels[alias]
		if !c.Enabled {
			continue
		}
		for _, p := range c.Paths {
			out = append(out, allowed{dir: realDir(f.expand(p)), broad: c.AllowBroadRoots, cfg: c})
		}
	}
	return out
}

func defaultFSConfig() config.FilesystemConfig {
	return config.FilesystemConfig{Recursive: true, DebounceMS: 500, SettleMS: 250, Events: []string{"created", "modified", "deleted", "renamed"}}
}

func sortedAliases(m map[string]config.FilesystemConfig) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// realDir is dir cleaned, its symlinks resolved when it exists.
func realDir(dir string) string {
	if dir == "" {
		return ""
	}
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return r
	}
	return filepath.Clean(dir)
}

func within(dir, root string) bool {
	if root == "" {
		return false
	}
	rel, err := filepath.Rel(root, dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// base is the directory a pattern's watch starts at: its part before the first glob character, or the
// pattern itself (its directory when it names a file).
func base(pattern string) string {
	i := strings.IndexAny(pattern, "*?[")
	if i < 0 {
		if st, err := os.Stat(pattern); err == nil && !st.IsDir() {
			return filepath.Dir(pattern)
		}
		return filepath.Clean(pattern)
	}
	return filepath.Dir(pattern[:i] + "x")
}

type target struct {
	dir string
	cfg config.FilesystemConfig
}

// targets are the directories to watch, in the order watches are given out: each enabled channel's paths,
// then each SOP pattern's base (confined).
func (f *FS) targets(roots []allowed) []target {
	var out []target
	have := map[string]bool{}
	for _, r := range roots[1:] {
		if !have[r.dir] {
			have[r.dir] = true
			out = append(out, target{r.dir, r.cfg})
		}
	}
	var pats []string
	if f.o.Patterns != nil {
		pats = f.o.Patterns()
	}
	for _, p := range pats {
		p = f.expand(p)
		if !filepath.IsAbs(p) {
			f.log.Warn("SOP filesystem trigger refused: its path must be absolute", "path", sop.CapUntrusted(p, 200))
			continue
		}
		dir := realDir(base(p))
		var ok *allowed
		for i := range roots {
			if within(dir, roots[i].dir) {
				ok = &roots[i]
				break
			}
		}
		if ok == nil {
			f.log.Warn("SOP filesystem trigger refused: its path is outside the install and every channels.filesystem path", "path", sop.CapUntrusted(p, 200))
			continue
		}
		if slices.Contains(broadRoots, dir) && !ok.broad {
			f.log.Warn("SOP filesystem trigger refused: a broad root needs allow_broad_roots", "path", dir)
			continue
		}
		if !have[dir] {
			have[dir] = true
			out = append(out, target{dir, ok.cfg})
		}
	}
	return out
}

type pendingEvent struct {
	kind sop.FSEvent
	path string
	due  time.Time
	cfg  config.FilesystemConfig
}

// Run watches until ctx ends. A watcher that cannot start is an error; a directory that cannot be watched
// is logged and skipped.
func (f *FS) Run(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("sop filesystem triggers: %w", err)
	}
	defer w.Close()
	cfgOf := map[string]config.FilesystemConfig{} // watched directory → its target's config
	resync := func() {
		want := f.targets(f.roots())
		next := map[string]config.FilesystemConfig{}
		for _, t := range want {
			f.addTree(w, t.dir, t.cfg, next)
		}
		for dir := range cfgOf {
			if _, keep := next[dir]; !keep {
				_ = w.Remove(dir)
			}
		}
		cfgOf = next
		f.publish(cfgOf)
	}
	resync()
	pending := newFSQueue(f.o.MaxPending)
	last := map[string]time.Time{}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	arm := func() {
		if first := pending.next(); !first.IsZero() {
			timer.Reset(max(time.Until(first), 0))
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-f.changed:
			resync()
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			f.log.Warn("SOP filesystem watcher error", "err", err)
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			dir := filepath.Dir(ev.Name)
			c, watchedDir := cfgOf[dir]
			if !watchedDir {
				c, watchedDir = cfgOf[ev.Name]
			}
			if !watchedDir {
				continue
			}
			if ev.Has(fsnotify.Create) {
				if st, err := os.Lstat(ev.Name); err == nil && st.IsDir() && c.Recursive {
					f.addTree(w, ev.Name, c, cfgOf)
					f.publish(cfgOf)
				}
			}
			kind, ok := kindOf(ev.Op)
			if !ok || !wanted(c, kind, ev.Name) {
				continue
			}
			k := string(kind) + "\x00" + ev.Name
			now := time.Now()
			if pending.has(k) {
				continue // coalesced into the queued one
			}
			if pending.has(string(sop.FSCreated)+"\x00"+ev.Name) && kind == sop.FSModified {
				continue // the writes of a new file are part of its creation
			}
			if t, ok := last[k]; ok && now.Sub(t) < time.Duration(c.DebounceMS)*time.Millisecond {
				continue
			}
			p := &pendingEvent{kind: kind, path: ev.Name, due: now.Add(time.Duration(c.SettleMS) * time.Millisecond), cfg: c}
			if !pending.add(k, p) {
				continue // a storm past the queue's room: counted, reported when the queue drains
			}
			if first := pending.next(); first.Equal(p.due) {
				arm()
			}
		case <-timer.C:
			now := time.Now()
			if n := pending.takeDropped(); n > 0 {
				f.log.Warn("SOP filesystem watcher: event storm; events past the pending limit were dropped",
					"dropped", n, "max_pending", pending.max)
			}
			for _, p := range pending.due(now) {
				last[string(p.kind)+"\x00"+p.path] = now
				f.dispatch(ctx, p)
			}
			for k, t := range last { // bound the debounce memory
				if now.Sub(t) > time.Minute || len(last) > 4*pending.max {
					delete(last, k)
				}
			}
			arm()
		}
	}
}

func (f *FS) publish(cfgOf map[string]config.FilesystemConfig) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.watched = make(map[string]bool, len(cfgOf))
	for d := range cfgOf {
		f.watched[d] = true
	}
}

// addTree watches dir and, when recursive, the directories below it, up to MaxWatches in all. Symlinked
// directories are not followed.
func (f *FS) addTree(w *fsnotify.Watcher, dir string, c config.FilesystemConfig, into map[string]config.FilesystemConfig) {
	add := func(d string) bool {
		if _, have := into[d]; have {
			return true
		}
		if len(into) >= f.o.MaxWatches {
			f.log.Warn("SOP filesystem watcher: watch limit reached; deeper directories are not watched", "max", f.o.MaxWatches, "dir", d)
			return false
		}
		if err := w.Add(d); err != nil {
			f.log.Warn("SOP filesystem watcher: cannot watch", "dir", d, "err", err)
			return true
		}
		into[d] = c
		return true
	}
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		f.log.Warn("SOP filesystem watcher: not a directory (yet); not watched", "dir", dir)
		return
	}
	if !c.Recursive {
		add(dir)
		return
	}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if !add(p) {
			return filepath.SkipAll
		}
		return nil
	})
}

func kindOf(op fsnotify.Op) (sop.FSEvent, bool) {
	switch {
	case op.Has(fsnotify.Create):
		return sop.FSCreated, true
	case op.Has(fsnotify.Write):
		return sop.FSModified, true
	case op.Has(fsnotify.Remove):
		return sop.FSDeleted, true
	case op.Has(fsnotify.Rename):
		return sop.FSRenamed, true
	}
	return "", false
}

// wanted applies a channel's events, include and exclude lists.
func wanted(c config.FilesystemConfig, kind sop.FSEvent, path string) bool {
	if len(c.Events) > 0 && !slices.Contains(c.Events, string(kind)) {
		return false
	}
	if len(c.Include) > 0 && !slices.ContainsFunc(c.Include, func(g string) bool { return sop.FSPathMatches(g, path) }) {
		return false
	}
	return !slices.ContainsFunc(c.Exclude, func(g string) bool { return sop.FSPathMatches(g, path) })
}

// dispatch builds the payload and hands the event on. A symlink is reported only with follow_symlinks and
// when its target stays inside the watched tree.
func (f *FS) dispatch(ctx context.Context, p *pendingEvent) {
	payload := map[string]any{"event": string(p.kind), "path": p.path, "file_name": filepath.Base(p.path)}
	if ext := strings.TrimPrefix(filepath.Ext(p.path), "."); ext != "" {
		payload["extension"] = ext
	}
	key := []string{string(p.kind), p.path}
	if p.kind != sop.FSDeleted && p.kind != sop.FSRenamed {
		st, err := os.Lstat(p.path)
		if err != nil {
			return // gone before it settled: its delete is its own event
		}
		if st.Mode()&os.ModeSymlink != 0 {
			target, err := filepath.EvalSymlinks(p.path)
			if !p.cfg.FollowSymlinks || err != nil || !within(target, realDir(filepath.Dir(p.path))) && !f.inAnyRoot(target) {
				f.log.Debug("SOP filesystem watcher: symlink skipped", "path", p.path)
				return
			}
			if st, err = os.Stat(p.path); err != nil {
				return
			}
		}
		if st.Mode().IsRegular() {
			payload["size"] = st.Size()
			payload["modified"] = st.ModTime().UTC().Format("2006-01-02T15:04:05Z")
			key = append(key, st.ModTime().UTC().Format(time.RFC3339Nano), fmt.Sprint(st.Size()))
			if p.cfg.ReadContent && p.cfg.MaxContentBytes > 0 && st.Size() <= int64(p.cfg.MaxContentBytes) {
				if b, err := readSmall(p.path, p.cfg.MaxContentBytes); err == nil {
					payload["content"] = strings.ToValidUTF8(string(b), "\uFFFD")
				}
			}
		}
	} else {
		key = append(key, time.Now().UTC().Format(time.RFC3339Nano))
	}
	b, _ := json.Marshal(payload)
	ev := sop.Event{Source: sop.SourceFilesystem, Topic: p.path, Payload: capPayload(b, f.o.PayloadMax), Key: "fs:" + digest(key...)}
	res, err := f.o.Dispatcher.Dispatch(ctx, ev)
	if err != nil {
		f.log.Warn("SOP filesystem watcher: the engine did not take an event", "path", p.path, "err", err)
		return
	}
	started, other := summarize(res)
	f.log.Debug("SOP filesystem event dispatched", "path", p.path, "event", p.kind, "started", started, "not_started", other)
}

func (f *FS) inAnyRoot(p string) bool {
	for _, r := range f.roots() {
		if within(p, r.dir) {
			return true
		}
	}
	return false
}

func readSmall(path string, max int) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, int64(max)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > max {
		return nil, fmt.Errorf("larger than %d bytes", max)
	}
	return b, nil
}

// Watched returns the directories being watched (for status and tests).
func (f *FS) Watched() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.watched))
	for d := range f.watched {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}
