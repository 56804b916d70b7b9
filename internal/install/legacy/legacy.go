// Package legacy moves an install older than schema version 3, whose state lived in one <install>/workspace/,
// into the current layout (state.md §1).
package legacy

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/atomicfile"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
)

// LayoutSchemaVersion is the config schema_version from which the install uses the current layout; below it, a
// legacy <install>/workspace/ is migrated (state.md §1).
const LayoutSchemaVersion = 3

// ErrOverlap is returned by Migrate when the data dir lies inside the legacy workspace, so moving
// the workspace's entries would move the daemon's own lock and data.
var ErrOverlap = errors.New("install: data dir is inside the legacy workspace")

// ErrSymlink is returned by Migrate when <root>/workspace is a symbolic link to a directory: that
// directory belongs to someone else, so its entries are neither moved out of it nor half backed up.
var ErrSymlink = errors.New("install: legacy workspace is a symbolic link")

// stepHook is called after each step that changes the disk (a file copied, an entry renamed); tests make it
// panic to stand for a kill -9 at that point.
var stepHook = func(step string) {}

// LegacyDir is <root>/workspace, the single workspace of installs older than schema version 3.
func Dir(l install.Layout) string { return filepath.Join(l.Root, "workspace") }

// Item is one entry of the legacy workspace: where it was, where it goes, and for an entry left in
// place, why.
type Item struct {
	From   string
	To     string
	Reason string // empty for moved items
}

// Report tells what Migrate did. The zero value means there was nothing to migrate.
type Report struct {
	Ran      bool     // a legacy workspace was found and a migration attempted
	Backup   string   // the full copy of the legacy workspace, "" if none was made
	Moved    []Item   // entries now at their new place
	Left     []Item   // entries still in the legacy workspace, with the reason
	Warnings []string // problems that did not stop the migration (a directory fsync failed...)

	complete bool
}

// Complete reports whether a migration ran and left nothing behind: only then should the caller mark the layout
// done (MarkDone), so that an incomplete migration is retried on the next start.
func (r Report) Complete() bool { return r.Ran && r.complete }

// Log writes the report to log: the backup and each moved entry at Info, each entry left and each warning at
// Warn, all with component "install".
func (r Report) Log(log *slog.Logger) {
	if !r.Ran {
		return
	}
	if r.Backup != "" {
		log.Info("legacy workspace backed up", "component", "install", "backup", r.Backup)
	}
	for _, m := range r.Moved {
		log.Info("legacy workspace entry moved", "component", "install", "from", m.From, "to", m.To)
	}
	for _, m := range r.Left {
		log.Warn("legacy workspace entry left in place", "component", "install", "from", m.From, "to", m.To,
			"reason", m.Reason)
	}
	for _, w := range r.Warnings {
		log.Warn(w, "component", "install")
	}
}

// sqliteCompanions are the files SQLite keeps next to a database; they must move with it or not at all.
var sqliteCompanions = []string{"-wal", "-shm", "-journal"}

// Migrate moves a legacy <root>/workspace/ into the current layout (state.md §1) when schemaVersion is
// below LayoutSchemaVersion and that directory exists; otherwise it does nothing and returns the zero report.
// The caller must hold the install lock and must not have opened any store yet.
//
// It first copies the legacy workspace, contents and modes, to <root>/backup-<now as YYYYMMDDTHHMMSS>/
// legacy-workspace (never into an existing backup dir: a suffix -2, -3... is added; no backup at all when every
// entry is blocked by a populated target, so nothing would move). Then, by rename, it moves
// sessions, state and devices.db (with its SQLite -wal/-shm/-journal files) into the data dir, skills into
// <root>/shared/, and every other entry into <root>/agents/default/workspace/, except memory/, which is split:
// brain.db, audit.db, response_cache.db (each with its companion files), MEMORY_SNAPSHOT.md and archive go to
// <data>/memory/, the rest of memory/ into <root>/agents/default/workspace/memory/ (the emptied memory/ is
// removed). A target that exists and is not an
// empty directory is never overwritten: the entry stays where it is and is listed in Left. The affected
// directories are fsynced; a workspace emptied by the migration is removed.
//
// Failures are for the caller to log as warnings, never to stop the daemon: an error (legacy workspace
// unreadable or a symbolic link, backup failed, data dir inside the legacy workspace) means nothing was moved; an entry that
// could not be moved is in Left.
func Migrate(l install.Layout, schemaVersion int, now time.Time) (Report, error) {
	var r Report
	if schemaVersion >= LayoutSchemaVersion {
		return r, nil
	}
	legacy := Dir(l)
	fi, err := os.Lstat(legacy)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if st, serr := os.Stat(legacy); serr != nil || !st.IsDir() {
			return r, nil
		}
		r.Ran = true
		return r, fmt.Errorf("%w: %s; move the directory it points to into place to migrate it", ErrSymlink, legacy)
	}
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !fi.IsDir()) {
		return r, nil
	}
	r.Ran = true
	if err != nil {
		return r, fmt.Errorf("install: legacy workspace: %w", err)
	}
	if within(l.DataDir, legacy) {
		return r, fmt.Errorf("%w: %s is inside %s", ErrOverlap, l.DataDir, legacy)
	}
	moves, err := planMoves(l, legacy)
	if err != nil {
		return r, err
	}
	movable := len(moves) == 0
	for _, mv := range moves {
		if _, reason := checkTargets(mv.src, mv.dst, mv.names); reason == "" {
			movable = true
		}
	}
	memory := filepath.Join(legacy, "memory")
	m := mover{report: &r, sync: map[string]bool{legacy: true}}
	if !movable {
		// Every entry is blocked: a backup would copy the same files again on every start, for nothing.
		for _, mv := range moves {
			m.move(mv.src, mv.dst, mv.names)
		}
		return r, nil
	}
	if r.Backup, err = backup(l.Root, legacy, now); err != nil {
		return r, err
	}
	for _, mv := range moves {
		if mv.src == memory {
			m.sync[memory] = true
		}
		m.move(mv.src, mv.dst, mv.names)
	}
	if empty, err := emptyDir(memory); err == nil && empty {
		// The split memory/ left nothing behind: remove it, or the workspace could never be removed.
		if err := os.Remove(memory); err != nil {
			r.Left = append(r.Left, Item{From: memory, Reason: fmt.Sprintf("remove emptied memory dir: %v", err)})
		}
		stepHook("remove " + memory)
	}
	if len(r.Left) == 0 {
		// Everything moved: remove the empty workspace so the next start does not find a legacy layout.
		if err := os.Remove(legacy); err != nil {
			r.Left = append(r.Left, Item{From: legacy, Reason: fmt.Sprintf("remove emptied workspace: %v", err)})
		}
		stepHook("remove " + legacy)
		m.sync[l.Root] = true
	}
	m.syncAll()
	r.complete = len(r.Left) == 0
	return r, nil
}

// memoryDataNames are the entries of a legacy memory/ directory that are install-wide stores and go to
// <data>/memory/ (state.md §1); everything else in memory/ is the default agent's and goes to its workspace.
var memoryDataNames = []string{"brain.db", "audit.db", "response_cache.db", "MEMORY_SNAPSHOT.md", "archive"}

// legacyMove is one group of entries of the src dir that moves, all or nothing, into the dst dir.
type legacyMove struct {
	src, dst string
	names    []string
}

// legacyMoves plans the migration of the legacy workspace: sessions, state and devices.db to the data dir,
// skills to the shared dir, memory/ split between <data>/memory and the default agent's workspace, everything
// else to the default agent's workspace. A SQLite database moves with its -wal/-shm/-journal files; companions
// left behind by an interrupted move follow their database to where it already is.
func planMoves(l install.Layout, legacy string) ([]legacyMove, error) {
	agent := l.AgentWorkspace("default")
	names, err := dirNames(legacy)
	if err != nil {
		return nil, fmt.Errorf("install: read legacy workspace: %w", err)
	}
	top := func(name string) string {
		switch name {
		case "sessions", "state", "devices.db":
			return l.DataDir
		case "skills":
			return l.SharedDir()
		}
		return agent
	}
	memory := filepath.Join(legacy, "memory")
	if fi, err := os.Lstat(memory); err == nil && fi.IsDir() {
		names = slices.DeleteFunc(names, func(n string) bool { return n == "memory" })
	} else {
		memory = ""
	}
	moves := groupMoves(legacy, names, []string{"devices.db"}, top)
	if memory != "" {
		sub, err := dirNames(memory)
		if err != nil {
			return nil, fmt.Errorf("install: read legacy memory dir: %w", err)
		}
		dataMemory := filepath.Join(l.DataDir, "memory")
		moves = append(moves, groupMoves(memory, sub, []string{"brain.db", "audit.db", "response_cache.db"}, func(name string) string {
			if slices.Contains(memoryDataNames, name) {
				return dataMemory
			}
			return filepath.Join(agent, "memory")
		})...)
	}
	return moves, nil
}

func dirNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}

// groupMoves groups the names of the src dir: each database of dbs with its companion files (the database
// first), every other name alone, each group bound for dest(first name). Companions whose database is no
// longer in src but already at its destination (an interrupted group move) form a group bound there; other
// companions without their database are ordinary files.
func groupMoves(src string, names, dbs []string, dest func(string) string) []legacyMove {
	var moves []legacyMove
	claimed := map[string]bool{}
	for _, db := range dbs {
		var companions []string
		for _, n := range names {
			if rest, ok := strings.CutPrefix(n, db); ok && isCompanion(rest) {
				companions = append(companions, n)
			}
		}
		dst := dest(db)
		_, moved := os.Lstat(filepath.Join(dst, db))
		switch {
		case slices.Contains(names, db):
			moves = append(moves, legacyMove{src: src, dst: dst, names: append([]string{db}, companions...)})
		case moved == nil && len(companions) > 0:
			moves = append(moves, legacyMove{src: src, dst: dst, names: companions})
		default:
			continue
		}
		claimed[db] = true
		for _, c := range companions {
			claimed[c] = true
		}
	}
	for _, n := range names {
		if !claimed[n] {
			moves = append(moves, legacyMove{src: src, dst: dest(n), names: []string{n}})
		}
	}
	return moves
}

func isCompanion(suffix string) bool {
	for _, s := range sqliteCompanions {
		if suffix == s {
			return true
		}
	}
	return false
}

// mover moves entries and remembers which directories to fsync.
type mover struct {
	report *Report
	sync   map[string]bool
}

// move renames every name of group from the src dir into the dst dir, or none of them if any target is
// populated.
func (m *mover) move(src, dst string, group []string) {
	left := func(reason string) {
		for _, name := range group {
			m.report.Left = append(m.report.Left, Item{
				From: filepath.Join(src, name), To: filepath.Join(dst, name), Reason: reason})
		}
	}
	replace, reason := checkTargets(src, dst, group)
	if reason != "" {
		left(reason)
		return
	}
	if err := m.mkdirAll(dst); err != nil {
		left(err.Error())
		return
	}
	for _, target := range replace {
		if err := os.Remove(target); err != nil {
			left(fmt.Sprintf("replace empty target: %v", err))
			return
		}
	}
	for i, name := range group {
		from, to := filepath.Join(src, name), filepath.Join(dst, name)
		if err := os.Rename(from, to); err != nil {
			// A database must not be split from its companions: put back what this group already moved.
			for _, done := range group[:i] {
				if rerr := os.Rename(filepath.Join(dst, done), filepath.Join(src, done)); rerr != nil {
					m.report.Warnings = append(m.report.Warnings, fmt.Sprintf(
						"%s moved without %s, and could not be put back: %v", done, name, rerr))
				}
			}
			m.report.Moved = m.report.Moved[:len(m.report.Moved)-i]
			left(fmt.Sprintf("rename: %v", err))
			return
		}
		m.report.Moved = append(m.report.Moved, Item{From: from, To: to})
		stepHook("rename " + from)
	}
}

// checkTargets returns the empty directories among group's targets in dst (to be removed before the move), or
// why the group must not move: a target exists and is not an empty directory, or cannot be inspected.
func checkTargets(src, dst string, group []string) (replace []string, reason string) {
	if !sameDevice(src, existingAncestor(dst)) {
		// A rename cannot cross filesystems; a copy would be a different, riskier operation.
		return nil, "target is on another filesystem than the legacy workspace: move it by hand"
	}
	for _, name := range group {
		target := filepath.Join(dst, name)
		empty, err := emptyDir(target)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, fmt.Sprintf("cannot inspect target: %v", err)
		case !empty:
			return nil, "target exists and is not empty"
		default:
			replace = append(replace, target)
		}
	}
	return replace, ""
}

// existingAncestor returns dir or its nearest ancestor that exists.
func existingAncestor(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || filepath.Dir(d) == d {
			return d
		}
	}
}

// mkdirAll creates dir (0700) and its missing parents, remembering the parents of what it created for fsync.
func (m *mover) mkdirAll(dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || filepath.Dir(d) == d {
			break
		}
		missing = append(missing, d)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	for _, d := range missing {
		m.sync[filepath.Dir(d)] = true
	}
	m.sync[dir] = true
	return nil
}

func (m *mover) syncAll() {
	for dir := range m.sync {
		if err := atomicfile.SyncDir(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			m.report.Warnings = append(m.report.Warnings, fmt.Sprintf("fsync %s: %v", dir, err))
		}
	}
}

// emptyDir reports whether path is an empty directory; a path that does not exist returns fs.ErrNotExist.
func emptyDir(path string) (bool, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return false, err
	}
	if !fi.IsDir() {
		return false, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	if err == io.EOF {
		return true, nil
	}
	return false, err
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// backup copies the legacy workspace to <root>/backup-<stamp>/legacy-workspace and returns that path. The copy
// is made as legacy-workspace.partial and renamed once complete and fsynced, so a legacy-workspace dir is
// always complete, even after a crash; a failed copy is removed.
func backup(root, legacy string, now time.Time) (string, error) {
	stamp := "backup-" + now.Format("20060102T150405")
	var dir string
	for i := 1; ; i++ {
		dir = filepath.Join(root, stamp)
		if i > 1 {
			dir += fmt.Sprintf("-%d", i)
		}
		err := os.Mkdir(dir, 0o700)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || i >= 1000 {
			return "", fmt.Errorf("install: create backup dir: %w", err)
		}
	}
	dst := filepath.Join(dir, "legacy-workspace")
	partial := dst + ".partial"
	err := copyTree(legacy, partial)
	if err == nil {
		err = atomicfile.SyncDir(dir)
	}
	if err == nil {
		err = os.Rename(partial, dst)
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("install: back up legacy workspace: %w", err)
	}
	stepHook("backup " + dst)
	for _, d := range []string{dir, root} {
		if err := atomicfile.SyncDir(d); err != nil {
			_ = os.RemoveAll(dir)
			return "", fmt.Errorf("install: back up legacy workspace: fsync %s: %w", d, err)
		}
	}
	return dst, nil
}

// modeBits are the mode bits a copy keeps.
const modeBits = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// copyTree copies the directory src to dst, which must not exist: regular files (contents, mode, mtime, each
// fsynced), directories (mode, mtime, fsynced) and symbolic links (as links, not followed). Any other kind of
// file (socket, FIFO, device) is an error, so a backup is never silently partial.
func copyTree(src, dst string) error {
	fi, err := os.Lstat(src)
	if err != nil {
		return err
	}
	switch mode := fi.Mode(); {
	case mode.IsRegular():
		return copyFile(src, dst, fi)
	case mode&fs.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	case mode.IsDir():
	default:
		return fmt.Errorf("%s: cannot copy a file of type %s", src, mode.Type())
	}
	if err := os.Mkdir(dst, 0o700); err != nil {
		return err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := copyTree(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
		stepHook("copy " + filepath.Join(src, e.Name()))
	}
	if err := atomicfile.SyncDir(dst); err != nil {
		return err
	}
	// The mode last, so a read-only source directory does not stop its own copy from being filled.
	if err := os.Chmod(dst, fi.Mode()&modeBits); err != nil {
		return err
	}
	return os.Chtimes(dst, fi.ModTime(), fi.ModTime())
}

func copyFile(src, dst string, fi fs.FileInfo) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Chmod(fi.Mode() & modeBits)
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Chtimes(dst, fi.ModTime(), fi.ModTime())
}

// legacyDoneName marks, in the data dir, that the legacy workspace of this install has been dealt with (moved,
// or there was none) while config.toml still is an older schema. Moving files never changes config.toml
// (state.md §1), so without the mark a directory made later at <root>/workspace would be taken for the legacy
// one and moved away.
const legacyDoneName = ".legacy-layout-done"

// Done reports whether MarkDone was called on this install.
func Done(l install.Layout) bool {
	_, err := os.Lstat(filepath.Join(l.DataDir, legacyDoneName))
	return err == nil
}

// MarkDone records that the legacy layout needs no more migration: later starts skip Migrate even
// while config.toml is an older schema. The data dir must exist (it holds the install lock).
func MarkDone(l install.Layout) error {
	err := atomicfile.CreateNoClobber(filepath.Join(l.DataDir, legacyDoneName), []byte("legacy workspace migrated\n"), 0o600)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("install: mark the legacy layout migrated: %w", err)
	}
	return nil
}
