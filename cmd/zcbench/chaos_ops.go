package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The operator's side of the chaos: while the clients write and the harness kills, one loop runs what an
// operator runs against a live install (doctor, backup, logs, costs, sessions list, config set, reload) and
// what another program does to its files (an outside SQLite reader opens and closes every database). After
// each tool it asks the kernel whether the daemon still holds SQLite's lock on its databases: a tool that made
// the daemon open and close one of their files outside SQLite drops that lock, and the next outside reader's
// close then deletes the WAL the daemon still writes to (acknowledged writes lost at the next kill). After the
// run every backup taken is restored and checked.

// liveDBs are the databases the daemon opens at start and keeps open (cron/jobs.db and brain.db open lazily).
var liveDBs = []string{"sessions/sessions.db", "sessions/acp-sessions.db", "control_plane.db", "devices.db"}

// maxBackups bounds the archives a run takes (each is restored and checked at the end).
const maxBackups = 10

// backupRec is one archive the operator took, and the turns acknowledged before it began.
type backupRec struct {
	path  string
	n     int
	turns map[string]string // prompt → mode ("chat" or "acp")
}

// opsLoop runs the operator's tools in turn until the run stops.
func (h *chaos) opsLoop() {
	defer h.wg.Done()
	backups := 0
	for i := 0; !h.done(); i++ {
		tool := []string{"doctor", "reader", "backup", "logs", "reader", "costs", "sessions", "config set", "reload"}[i%9]
		pid := int(h.daemonPID.Load())
		var err error
		switch tool {
		case "reader":
			err = h.outsideReader()
		case "backup":
			if backups >= maxBackups {
				continue
			}
			backups++
			err = h.takeBackup(backups)
		case "doctor":
			err = h.cli("doctor", "--offline")
		case "logs":
			err = h.cli("logs")
		case "costs":
			err = h.cli("costs")
		case "sessions":
			err = h.cli("sessions", "list")
		case "config set":
			err = h.cli("config", "set", "observability.log_persistence_max_entries", fmt.Sprint(250+i%2*50))
		case "reload":
			err = h.cli("config", "reload")
		}
		h.led.do(func() {
			h.led.ops[tool]++
			if err != nil {
				h.led.opsFailed[tool]++ // the daemon was killed under it: expected now and then
			}
		})
		if pid != 0 {
			h.checkLocks(tool, pid)
		}
		time.Sleep(workerPause)
	}
}

// cli runs the zeroclaw binary on the install, bounded in time.
func (h *chaos) cli(args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.bin, args...)
	cmd.Env = []string{"HOME=" + h.in.home, "PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("zeroclaw %s: %w: %s", strings.Join(args, " "), err, lastLines(string(out), 3))
	}
	return nil
}

// outsideReader opens every database of the install, reads its schema and closes it, as sqlite3 would.
func (h *chaos) outsideReader() error {
	var errs []error
	for _, p := range h.databases(filepath.Join(h.in.root, "data")) {
		db, err := sql.Open("sqlite", "file:"+p+"?mode=rw&_pragma=busy_timeout(5000)")
		if err == nil {
			var n int
			err = errors.Join(db.QueryRow("SELECT count(*) FROM sqlite_master").Scan(&n), db.Close())
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// databases lists the *.db files under dir.
func (h *chaos) databases(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.HasSuffix(p, ".db") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// takeBackup runs zeroclaw backup and records the archive with the turns acknowledged before it began.
func (h *chaos) takeBackup(n int) error {
	rec := backupRec{path: filepath.Join(h.in.home, fmt.Sprintf("chaos-backup-%d.tar.gz", n)), n: n, turns: map[string]string{}}
	h.led.do(func() {
		for text, t := range h.led.turns {
			if t.acked {
				rec.turns[text] = t.mode
			}
		}
	})
	if err := h.cli("backup", rec.path); err != nil {
		return err
	}
	h.led.do(func() { h.led.backups = append(h.led.backups, rec) })
	return nil
}

// checkLocks: after a tool ran, the daemon that was up before it still holds SQLite's SHARED lock on each of
// its databases. A daemon killed meanwhile (its pid no longer the current one) proves nothing.
func (h *chaos) checkLocks(tool string, pid int) {
	for _, rel := range liveDBs {
		holder, ok := sqliteLockHolder(filepath.Join(h.in.root, "data", filepath.FromSlash(rel)))
		if !ok || holder == pid || int(h.daemonPID.Load()) != pid {
			continue
		}
		h.led.do(func() {
			h.led.lockLost = append(h.led.lockLost, fmt.Sprintf("after %s, daemon pid %d no longer holds its SQLite lock on %s (held by: %d)", tool, pid, rel, holder))
		})
	}
}

// checkOps reports what the operator's loop found, then restores every backup into a new install and checks it:
// each database passes PRAGMA integrity_check, and each turn acknowledged before the backup began is in it.
func (h *chaos) checkOps() {
	l := h.led
	l.mu.Lock()
	lost, backups := l.lockLost, l.backups
	var ran []string
	for _, k := range sortedKeys(l.ops) {
		ran = append(ran, fmt.Sprintf("%s ×%d (%d cut)", k, l.ops[k], l.opsFailed[k]))
	}
	l.mu.Unlock()
	fmt.Fprintf(h.log, "chaos: operator tools run: %s\n", strings.Join(ran, ", "))
	for _, m := range lost {
		h.violate("%s", m)
	}
	if len(lost) == 0 {
		h.pass("the daemon kept its SQLite locks through every operator tool (%s)", strings.Join(ran, ", "))
	}

	before := len(h.violations)
	for _, b := range backups {
		if err := h.checkBackup(b); err != nil {
			h.violate("backup %d: %v", b.n, err)
		}
	}
	if len(backups) == 0 {
		h.violate("no backup succeeded during the run")
	} else if len(h.violations) == before {
		h.pass("every backup taken restores, passes integrity_check and holds every turn acknowledged before it began (%d backups)", len(backups))
	}
}

func (h *chaos) checkBackup(b backupRec) error {
	root := filepath.Join(h.in.home, fmt.Sprintf("restored-%d", b.n))
	defer os.RemoveAll(root)
	if err := h.cli("restore", b.path, "--config-dir", root); err != nil {
		return err
	}
	data := filepath.Join(root, "data")
	dbs := h.databases(data)
	if len(dbs) == 0 {
		return fmt.Errorf("no database in the restored install")
	}
	found := map[string]int{}
	for _, p := range dbs {
		rel, _ := filepath.Rel(data, p)
		db, err := sql.Open("sqlite", "file:"+p+"?mode=ro")
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		var res string
		err = db.QueryRow("PRAGMA integrity_check").Scan(&res)
		if err == nil && res != "ok" {
			err = fmt.Errorf("integrity_check: %s", res)
		}
		if err == nil {
			err = countTurns(db, filepath.ToSlash(rel), b.turns, found)
		}
		if err = errors.Join(err, db.Close()); err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
	}
	var missing []string
	for _, text := range sortedKeys(b.turns) {
		if found[text] != 1 {
			missing = append(missing, fmt.Sprintf("%q (%s) ×%d", text, b.turns[text], found[text]))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%d of %d turns acknowledged before it began are not in it exactly once: %s", len(missing), len(b.turns),
			strings.Join(missing[:min(len(missing), 5)], ", "))
	}
	return nil
}

// countTurns counts, in a restored chat or ACP database, the user messages that are acknowledged turns.
func countTurns(db *sql.DB, rel string, turns map[string]string, found map[string]int) error {
	var q string
	switch rel {
	case "sessions/sessions.db":
		q = "SELECT content FROM sessions WHERE role = 'user'"
	case "sessions/acp-sessions.db":
		q = "SELECT content FROM acp_messages WHERE role = 'user'"
	default:
		return nil
	}
	rows, err := db.Query(q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		if _, ok := turns[s]; ok {
			found[s]++
		}
	}
	return rows.Err()
}

// anotherDaemon is how a daemon refuses an install another one holds.
// The pid is missing while the holder has the lock but has not written its pid yet.
var anotherDaemon = regexp.MustCompile(`another daemon (?:\(pid (\d+)\) )?serves`)

// restart starts the daemon again after a kill. An operator's `zeroclaw sessions list` run while no daemon
// served starts an ephemeral one, as it does for a user, and the reconnecting clients keep it alive: it is one
// more daemon of this install, killed -9 like the others before the restart is tried again.
func (h *chaos) restart() (*proc, error) {
	for try := 0; ; try++ {
		d, err := startDaemon(h.bin, h.in)
		m := anotherDaemon.FindStringSubmatch(fmt.Sprint(err))
		if err == nil || m == nil || try >= 20 {
			return d, err
		}
		if m[1] == "" { // the holder is starting: ask again once it has said who it is
			time.Sleep(50 * time.Millisecond)
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		cmdline, rerr := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if rerr != nil { // the holder is gone already (an ephemeral daemon whose last client left): try again
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if !strings.Contains(string(cmdline), "--ephemeral") {
			return nil, fmt.Errorf("%w (the holder, pid %d, runs %q)", err, pid, strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
		if p, e := os.FindProcess(pid); e == nil {
			_ = p.Signal(os.Kill)
		}
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if _, e := os.Stat(fmt.Sprintf("/proc/%d", pid)); e != nil {
				break
			}
		}
		h.led.do(func() { h.led.ops["ephemeral daemon killed"]++ })
	}
}
