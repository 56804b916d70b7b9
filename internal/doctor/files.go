package doctor

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// checkModes finds private files and directories that other users can read or write. The key and the config
// hold secrets, the databases and ledgers hold conversations: a loose mode on them is an error; on a
// directory a warning.
func checkModes(r *report, l install.Layout) {
	if runtime.GOOS == "windows" { // ACLs, not mode bits: nothing meaningful to compare
		return
	}
	bad := 0
	check := func(p string, isDir bool) {
		fi, err := os.Lstat(p)
		if err != nil {
			return
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if p == l.SecretKeyPath() {
				bad++
				r.fail(CategoryFiles, "key-symlink", p, r.t("doctor-key-symlink", "path", p), r.t("doctor-key-symlink-fix", "path", p))
			}
			return
		}
		perm := fi.Mode().Perm()
		if perm&0o077 == 0 {
			return
		}
		bad++
		if isDir {
			r.warn(CategoryFiles, "dir-mode", p, r.t("doctor-dir-mode", "path", p, "mode", fmt.Sprintf("%04o", perm)), "chmod 700 "+p)
			return
		}
		r.fail(CategoryFiles, "file-mode", p, r.t("doctor-file-mode", "path", p, "mode", fmt.Sprintf("%04o", perm)), "chmod 600 "+p)
	}
	check(l.Root, true)
	check(l.DataDir, true)
	check(l.ConfigPath(), false)
	check(l.ConfigPath()+".bak", false)
	check(l.SecretKeyPath(), false)
	for _, d := range []string{l.SessionsDir(), l.StateDir(), filepath.Join(l.DataDir, "cron"), filepath.Join(l.DataDir, "memory"), filepath.Join(l.DataDir, "sop")} {
		check(d, true)
	}
	for _, p := range dataFiles(l) {
		check(p, false)
	}
	if bad == 0 {
		r.ok(CategoryFiles, "modes-ok", r.t("doctor-modes-ok"))
	}
}

// dataFiles lists the databases (and their -wal/-shm) and JSONL files under the data dir, sorted.
func dataFiles(l install.Layout) []string {
	var out []string
	_ = filepath.WalkDir(l.DataDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		name := d.Name()
		if strings.HasSuffix(name, ".jsonl") || strings.HasSuffix(name, ".db") || strings.HasSuffix(name, ".db-wal") ||
			strings.HasSuffix(name, ".db-shm") || store.IsDatabase(p) {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// databases lists every SQLite database under the data dir: files with the SQLite header, and files named
// *.db (a .db that lost its header is exactly what must be reported).
func databases(l install.Layout) []string {
	var out []string
	for _, p := range dataFiles(l) {
		if strings.HasSuffix(p, ".db") || (store.IsDatabase(p) && !strings.HasSuffix(p, "-wal") && !strings.HasSuffix(p, "-shm")) {
			out = append(out, p)
		}
	}
	return out
}

// checkDatabases runs PRAGMA integrity_check on every database that exists; none is created.
func checkDatabases(ctx context.Context, r *report, l install.Layout) {
	for _, p := range databases(l) {
		fix := r.t("doctor-db-fix", "path", p)
		if fi, err := os.Stat(p); err == nil && fi.Size() == 0 {
			r.ok(CategoryDatabase, "db-empty", r.t("doctor-db-empty", "path", p))
			continue
		}
		if !store.IsDatabase(p) {
			r.fail(CategoryDatabase, "db-not-sqlite", p, r.t("doctor-db-not-sqlite", "path", p), fix)
			continue
		}
		problems, err := store.IntegrityCheck(ctx, p)
		switch {
		case err != nil:
			r.fail(CategoryDatabase, "db-unreadable", p, r.t("doctor-db-unreadable", "path", p, "error", err), fix)
		case len(problems) > 0:
			r.fail(CategoryDatabase, "db-corrupt", p, r.t("doctor-db-corrupt", "path", p, "problems", strings.Join(problems, "; ")), fix)
		default:
			r.ok(CategoryDatabase, "db-ok", r.t("doctor-db-ok", "path", p))
			checkSpace(ctx, r, p)
		}
	}
}

// checkSpace reports the space database p takes: the file, its WAL and its free pages; a WAL past the bound
// the store keeps it under (store.WALSizeLimit, cut back at each checkpoint) is a warning.
func checkSpace(ctx context.Context, r *report, p string) {
	st, err := store.Stats(ctx, p)
	if err != nil {
		r.warn(CategoryDatabase, "db-size-unknown", p, fmt.Sprintf("%s: size unknown: %v", p, err), "")
		return
	}
	msg := fmt.Sprintf("%s: %s, WAL %s, %d free pages (%s)", p, mib(st.FileBytes), mib(st.WALBytes), st.FreePages, mib(st.FreePages*st.PageSize))
	if st.WALBytes > store.WALSizeLimit {
		r.warn(CategoryDatabase, "db-wal-large", p, msg+fmt.Sprintf("; the WAL is past its %s bound (a reader may be holding it open)", mib(store.WALSizeLimit)),
			"stop the daemon (zeroclaw stop) and start it again: the last connection's checkpoint empties the WAL")
		return
	}
	if free := st.FreePages * st.PageSize; free > compactHintBytes && free*4 > st.FileBytes {
		msg += "; zeroclaw storage compact (daemon stopped) gives the free pages back"
	}
	r.ok(CategoryDatabase, "db-size", msg)
}

// compactHintBytes is the free space from which a database's db-size finding names zeroclaw storage compact
// (when the free pages are also a quarter of the file or more).
const compactHintBytes = 1 << 20

// checkBudget reports what the data dir takes against [storage] max_disk_bytes: within it (or no budget) is a
// note; over it is a warning, since the daemon deletes only prunable data (rotated logs) for the budget and
// what is left over is the owner's to decide about.
func checkBudget(r *report, l install.Layout, cfg *config.Config) {
	usage, err := store.DirBytes(l.DataDir)
	if err != nil {
		return // no data dir yet: nothing stored
	}
	budget := cfg.Storage.MaxDiskBytes
	switch {
	case budget <= 0:
		r.ok(CategoryDatabase, "disk-budget", fmt.Sprintf("%s: %s on disk (no budget: storage.max_disk_bytes = 0)", l.DataDir, mib(usage)))
	case usage <= budget:
		r.ok(CategoryDatabase, "disk-budget", fmt.Sprintf("%s: %s on disk of its %s budget (storage.max_disk_bytes)", l.DataDir, mib(usage), mib(budget)))
	default:
		r.warn(CategoryDatabase, "disk-over-budget", l.DataDir,
			fmt.Sprintf("%s: %s on disk, over its %s budget (storage.max_disk_bytes); the daemon deletes only rotated logs for it, and what is left (sessions, memory, cron, costs) is never deleted without you", l.DataDir, mib(usage), mib(budget)),
			"raise storage.max_disk_bytes, run zeroclaw storage compact (daemon stopped), or delete sessions you no longer need")
	}
}

// mib spells a byte count in MiB with one decimal (KiB below one MiB).
func mib(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// checkReceipts compares the JSONL import receipts of sessions.db with the archives (X.jsonl.migrated) and
// finds staged sources (X.jsonl.importing) an interrupted import left (state.md §5).
func checkReceipts(ctx context.Context, r *report, l install.Layout, live bool) {
	dir := l.SessionsDir()
	db := filepath.Join(dir, "sessions.db")
	receipts := map[string]store.Receipt{}
	if store.IsDatabase(db) {
		list, err := store.ImportReceipts(ctx, db)
		if err != nil {
			r.fail(CategorySessions, "receipts-unreadable", db, r.t("doctor-receipts-unreadable", "error", err),
				r.t("doctor-receipts-unreadable-fix", "path", db))
			return
		}
		for _, rc := range list {
			receipts[rc.SourceName] = rc
		}
	}
	next := r.t("doctor-next-start")
	if live {
		next = r.t("doctor-next-restart")
	}
	bad := 0
	names := make([]string, 0, len(receipts))
	for n := range receipts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		rc := receipts[name]
		archive := filepath.Join(dir, name+".migrated")
		staged := filepath.Join(dir, name+".importing")
		switch {
		case exists(archive):
			sum, n, err := store.FileSHA256(archive)
			if err != nil {
				bad++
				r.fail(CategorySessions, "archive-unreadable", archive, r.t("doctor-archive-unreadable", "path", archive, "error", err), "chmod 600 "+archive)
			} else if sum != rc.SHA256 || n != rc.Len {
				bad++
				r.fail(CategorySessions, "archive-mismatch", archive,
					r.t("doctor-archive-mismatch", "path", archive, "size", n, "sum", short(sum), "receipt_size", rc.Len, "receipt_sum", short(rc.SHA256)),
					r.t("doctor-archive-mismatch-fix", "path", archive, "dir", dir))
			}
		case exists(staged):
			// Handled with the other staged files below.
		default:
			bad++
			r.warn(CategorySessions, "archive-missing", archive,
				r.t("doctor-archive-missing", "name", name, "session", rc.SessionKey, "path", archive),
				r.t("doctor-archive-missing-fix", "path", archive))
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".importing")
		if !ok || !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		bad++
		if exists(filepath.Join(dir, name)) {
			r.fail(CategorySessions, "importing-ambiguous", p, r.t("doctor-importing-ambiguous", "name", name, "staged", e.Name()),
				r.t("doctor-importing-ambiguous-fix", "name", name, "dir", dir))
			continue
		}
		if rc, ok := receipts[name]; ok {
			sum, n, err := store.FileSHA256(p)
			if err == nil && (sum != rc.SHA256 || n != rc.Len) {
				r.fail(CategorySessions, "importing-mismatch", p, r.t("doctor-importing-mismatch", "path", p),
					r.t("doctor-importing-mismatch-fix", "path", p, "dir", dir))
				continue
			}
			r.warn(CategorySessions, "importing-orphan", p, r.t("doctor-importing-handoff", "path", p, "name", name), r.t("doctor-importing-handoff-fix", "next", next))
			continue
		}
		r.warn(CategorySessions, "importing-orphan", p, r.t("doctor-importing-orphan", "path", p), r.t("doctor-importing-orphan-fix", "next", next))
	}
	if bad == 0 && len(receipts) > 0 {
		r.ok(CategorySessions, "receipts-ok", r.t("doctor-receipts-ok", "count", len(receipts)))
	}
}

// short is the first 12 hex digits of a digest, as findings show it.
func short(sum string) string {
	if len(sum) > 12 {
		return sum[:12] + "…"
	}
	return sum
}
