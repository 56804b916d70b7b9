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
				r.fail(CategoryFiles, "key-symlink", p, p+" is a symbolic link: the key is refused",
					"replace the link with the key file itself: cp --remove-destination \"$(readlink -f "+p+")\" "+p)
			}
			return
		}
		perm := fi.Mode().Perm()
		if perm&0o077 == 0 {
			return
		}
		bad++
		if isDir {
			r.warn(CategoryFiles, "dir-mode", p, fmt.Sprintf("%s has mode %04o: other users can list it", p, perm), "chmod 700 "+p)
			return
		}
		r.fail(CategoryFiles, "file-mode", p, fmt.Sprintf("%s has mode %04o: other users can read it", p, perm), "chmod 600 "+p)
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
		r.ok(CategoryFiles, "modes-ok", "the config, the key and the data files are private")
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
		fix := "stop the daemon (zeroclaw stop), then restore the file from a backup (zeroclaw restore FILE.tar.gz), " +
			"or salvage what is readable: sqlite3 " + p + " .recover | sqlite3 " + p + ".recovered and move it into place"
		if fi, err := os.Stat(p); err == nil && fi.Size() == 0 {
			r.ok(CategoryDatabase, "db-empty", p+": empty (an SQLite database nothing was written to yet)")
			continue
		}
		if !store.IsDatabase(p) {
			r.fail(CategoryDatabase, "db-not-sqlite", p, p+" is not an SQLite database (its header is wrong)", fix)
			continue
		}
		problems, err := store.IntegrityCheck(ctx, p)
		switch {
		case err != nil:
			r.fail(CategoryDatabase, "db-unreadable", p, fmt.Sprintf("%s cannot be checked: %v", p, err), fix)
		case len(problems) > 0:
			r.fail(CategoryDatabase, "db-corrupt", p, fmt.Sprintf("%s is corrupt: %s", p, strings.Join(problems, "; ")), fix)
		default:
			r.ok(CategoryDatabase, "db-ok", p+": integrity ok")
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
	r.ok(CategoryDatabase, "db-size", msg)
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
			r.fail(CategorySessions, "receipts-unreadable", db, fmt.Sprintf("the JSONL import receipts cannot be read: %v", err),
				"see the database finding for "+db)
			return
		}
		for _, rc := range list {
			receipts[rc.SourceName] = rc
		}
	}
	next := "start the daemon: zeroclaw daemon"
	if live {
		next = "restart the daemon (zeroclaw stop, then zeroclaw daemon): imports run at start"
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
				r.fail(CategorySessions, "archive-unreadable", archive, fmt.Sprintf("%s cannot be read: %v", archive, err), "chmod 600 "+archive)
			} else if sum != rc.SHA256 || n != rc.Len {
				bad++
				r.fail(CategorySessions, "archive-mismatch", archive,
					fmt.Sprintf("%s differs from its import receipt (%d bytes, sha256 %.12s…; receipt: %d bytes, %.12s…): the daemon refuses it", archive, n, sum, rc.Len, rc.SHA256),
					"the messages are already in sessions.db: move "+archive+" out of "+dir+" (keep it if it holds anything else)")
			}
		case exists(staged):
			// Handled with the other staged files below.
		default:
			bad++
			r.warn(CategorySessions, "archive-missing", archive,
				fmt.Sprintf("%s was imported (session %s) but its archive %s is gone", name, rc.SessionKey, archive),
				"nothing is lost: the messages are in sessions.db; put the original file back as "+archive+" if you still have it")
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
			r.fail(CategorySessions, "importing-ambiguous", p, fmt.Sprintf("both %s and %s exist: the import cannot tell which is current", name, e.Name()),
				"compare the two files, keep the right one as "+name+" and move the other out of "+dir)
			continue
		}
		if rc, ok := receipts[name]; ok {
			sum, n, err := store.FileSHA256(p)
			if err == nil && (sum != rc.SHA256 || n != rc.Len) {
				r.fail(CategorySessions, "importing-mismatch", p, fmt.Sprintf("%s differs from the receipt already committed for it", p),
					"the receipt's messages are in sessions.db: move "+p+" out of "+dir)
				continue
			}
			r.warn(CategorySessions, "importing-orphan", p, fmt.Sprintf("%s was imported but its hand-off to %s.migrated was interrupted", p, name), next+": it finishes the hand-off without duplicating messages")
			continue
		}
		r.warn(CategorySessions, "importing-orphan", p, fmt.Sprintf("%s is left from an interrupted import", p), next+": it imports the file")
	}
	if bad == 0 && len(receipts) > 0 {
		r.ok(CategorySessions, "receipts-ok", fmt.Sprintf("%d imported JSONL sessions match their archives", len(receipts)))
	}
}
