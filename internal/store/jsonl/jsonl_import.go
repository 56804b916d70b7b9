package jsonl

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/zeroclaw-go/zeroclaw/internal/atomicfile"
)

// Errors of the JSONL import (state.md §5). Each per-source error wraps one of these or an I/O or SQL error.
var (
	// ErrImportConflict reports on-disk or database state the import refuses to overwrite or guess about:
	// a live and a staged copy of one source, a live source whose archive already exists, SQLite rows for
	// the key without a receipt, or a live source that reappeared after the handoff.
	ErrImportConflict = errors.New("store: jsonl import conflict")
	// ErrReceiptMismatch reports a staged source or an archive whose key, SHA-256 or length differs from
	// the receipt already committed for it.
	ErrReceiptMismatch = errors.New("store: jsonl source does not match its import receipt")
	// ErrNoValidMessages reports a source with non-whitespace content from which no message could be read.
	ErrNoValidMessages = errors.New("store: contains no valid messages")
)

const (
	jsonlExt    = ".jsonl"
	stagedExt   = ".jsonl.importing"
	archivedExt = ".jsonl.migrated"
)

// ImportReport summarizes one ImportDir run.
type ImportReport struct {
	// Sessions is the number of sources imported by this run (a zero-message session counts), Messages the
	// number of messages they inserted.
	Sessions, Messages int
	// Resumed is the number of staged sources whose receipt an earlier run committed: verified and archived
	// without inserting anything.
	Resumed int
	// Migrated is true once the database holds at least one receipt: from then on a JSONL backend must not
	// mutate this directory for the life of the process, even if some source failed.
	Migrated bool
	// Failed lists every source that could not be imported or archived, in processing order.
	Failed []ImportFailure
	// Skipped lists lines of the imported sources that were not imported: too long (MaxLineBytes) or of a
	// role the import does not take (ImportDir). At most maxSkippedPerSource per source are listed;
	// SkippedMore counts the others. Unreadable lines (not UTF-8, not JSON, no role or content) are skipped
	// without a report, as the JSONL backend skips them.
	Skipped     []SkippedLine
	SkippedMore int
}

// SkippedLine is a line of a source that the import left out. Reason names the role or the length, never the
// line's content.
type SkippedLine struct {
	Source string // the live name, e.g. "u1.jsonl"
	Line   int    // 1-based
	Reason string
}

// ImportFailure is the error of one source. Err names files and keys, never message contents.
type ImportFailure struct {
	Source string // the live name, e.g. "u1.jsonl"
	Err    error
}

// jsonlDirLocks holds one mutex per sessions directory (absolute path): the process-wide JSONL mutation
// lock of state.md §4, so two stores constructed on one directory never import the same source twice.
var jsonlDirLocks sync.Map

func lockJSONLDir(dir string) (unlock func(), err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	v, _ := jsonlDirLocks.LoadOrStore(abs, new(sync.Mutex))
	mu := v.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock, nil
}

// candidate is one source found in the directory.
type candidate struct {
	key    string
	staged bool // found as X.jsonl.importing
}

func (c candidate) source() string { return c.key + jsonlExt }

// MaxLineBytes is the longest line of a legacy JSONL session file the import reads (1 MiB, newline
// excluded). A longer line is skipped, never held in memory whole: the import reports it (ImportReport.Skipped,
// with the file and the line number) and the source's archive (X.jsonl.migrated) keeps its bytes.
const MaxLineBytes = 1 << 20

// maxSkippedPerSource bounds the lines of one source listed in ImportReport.Skipped; the rest are only counted.
const maxSkippedPerSource = 20

// ImportDir moves the legacy chat sessions of dir (data/sessions/X.jsonl, and X.jsonl.importing left by an
// interrupted run) into the database, following state.md §5: each source is staged, hashed, inserted with its
// metadata and a receipt in one synchronous=FULL transaction (every message's created_at = now), then
// archived as X.jsonl.migrated and removed. A source already covered by a matching receipt is only archived,
// so running it again, or after a crash at any point, never duplicates messages. One source's failure does
// not stop the others: every failure is listed in the report and the returned error joins them. A missing
// dir is nothing to import. It holds the process-wide lock of dir throughout.
//
// A source is read as a stream, one line at a time: a line longer than MaxLineBytes is skipped and
// reported. Only user and assistant lines, and tool lines in this program's own stored form (a JSON object
// with a "zeroclaw_tool_result" key, as the JSONL backend writes them), are imported; a line of any other role
// (system, a foreign tool result, developer...) is skipped and reported, so a legacy file never puts a system
// prompt or a forged tool result in front of the model.
func ImportDir(ctx context.Context, s *store.ChatStore, dir string, now time.Time) (ImportReport, error) {
	return importJSONL(ctx, s, dir, now, nil)
}

func importJSONL(ctx context.Context, s *store.ChatStore, dir string, now time.Time, onSource func(string)) (ImportReport, error) {
	var rep ImportReport
	if err := s.Seam().Check("import jsonl", dir, false); err != nil {
		return rep, err
	}
	unlock, err := lockJSONLDir(dir)
	if err != nil {
		return rep, fmt.Errorf("store: import jsonl %s: %w", dir, err)
	}
	defer unlock()

	var receipts int
	if err := s.Seam().Writer().QueryRowContext(ctx, "SELECT COUNT(*) FROM jsonl_import_receipts").Scan(&receipts); err != nil {
		return rep, fmt.Errorf("store: import jsonl %s: read receipts: %w", dir, err)
	}
	rep.Migrated = receipts > 0

	cands, failed, err := scanJSONL(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return rep, nil
	}
	if err != nil {
		return rep, fmt.Errorf("store: import jsonl %s: %w", dir, err)
	}
	rep.Failed = failed
	for _, c := range cands {
		if err := ctx.Err(); err != nil {
			rep.Failed = append(rep.Failed, ImportFailure{Source: c.source(), Err: fmt.Errorf("store: import %s: %w", c.source(), err)})
			break
		}
		if onSource != nil {
			onSource(c.source())
		}
		res, err := importSource(ctx, s, dir, c, now)
		if res.committed {
			rep.Migrated = true
		}
		if res.inserted {
			rep.Sessions++
			rep.Messages += res.messages
			rep.Skipped = append(rep.Skipped, res.skipped...)
			rep.SkippedMore += res.skippedMore
		}
		if res.resumed {
			rep.Resumed++
		}
		if err != nil {
			rep.Failed = append(rep.Failed, ImportFailure{Source: c.source(), Err: err})
		}
	}
	errs := make([]error, len(rep.Failed))
	for i, f := range rep.Failed {
		errs[i] = f.Err
	}
	return rep, errors.Join(errs...)
}

// scanJSONL lists the candidates of dir, staged ones first, then by name. Names it cannot accept become
// failures instead of candidates.
func scanJSONL(dir string) ([]candidate, []ImportFailure, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	type seen struct{ live, staged bool }
	keys := map[string]*seen{}
	var failed []ImportFailure
	for _, e := range entries {
		name := e.Name()
		var key string
		var staged bool
		switch {
		case strings.HasSuffix(name, stagedExt):
			key, staged = strings.TrimSuffix(name, stagedExt), true
		case strings.HasSuffix(name, jsonlExt):
			key = strings.TrimSuffix(name, jsonlExt)
		default:
			continue
		}
		if !utf8.ValidString(name) {
			failed = append(failed, ImportFailure{Source: fmt.Sprintf("%q", name),
				Err: fmt.Errorf("store: import %q: file name is not UTF-8: %w", name, store.ErrInvalid)})
			continue
		}
		if key == "" || !e.Type().IsRegular() {
			failed = append(failed, ImportFailure{Source: name,
				Err: fmt.Errorf("store: import %s: not a regular file with a session key: %w", name, store.ErrInvalid)})
			continue
		}
		k := keys[key]
		if k == nil {
			k = &seen{}
			keys[key] = k
		}
		if staged {
			k.staged = true
		} else {
			k.live = true
		}
	}
	var cands []candidate
	for key, k := range keys {
		if k.live && k.staged {
			failed = append(failed, ImportFailure{Source: key + jsonlExt, Err: fmt.Errorf(
				"store: import %s: both %s and %s exist: %w", key+jsonlExt, key+jsonlExt, key+stagedExt, ErrImportConflict)})
			continue
		}
		cands = append(cands, candidate{key: key, staged: k.staged})
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].staged != cands[j].staged {
			return cands[i].staged
		}
		return cands[i].key < cands[j].key
	})
	sort.SliceStable(failed, func(i, j int) bool { return failed[i].Source < failed[j].Source })
	return cands, failed, nil
}

// sourceResult is what importSource achieved, even when it then failed: committed means a receipt for the
// source is (or may be) durable; inserted that this run committed its messages; resumed that an earlier
// run's receipt was verified instead.
type sourceResult struct {
	committed, inserted, resumed bool
	messages                     int
	skipped                      []SkippedLine
	skippedMore                  int
}

// importSource runs steps 4–10 of state.md §5 for one candidate.
func importSource(ctx context.Context, s *store.ChatStore, dir string, c candidate, now time.Time) (sourceResult, error) {
	src := c.source()
	live := filepath.Join(dir, src)
	staged := filepath.Join(dir, c.key+stagedExt)
	archive := filepath.Join(dir, c.key+archivedExt)
	fail := func(format string, args ...any) error {
		return fmt.Errorf("store: import %s: "+format, append([]any{src}, args...)...)
	}
	var res sourceResult

	if !c.staged {
		if _, err := os.Lstat(archive); err == nil {
			return res, fail("%s already exists: %w", filepath.Base(archive), ErrImportConflict)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return res, fail("%w", err)
		}
		// rename replaces whatever has the staged name; the scan only counts regular files as staged copies.
		if _, err := os.Lstat(staged); err == nil {
			return res, fail("both %s and %s exist: %w", src, filepath.Base(staged), ErrImportConflict)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return res, fail("%w", err)
		}
		if err := os.Rename(live, staged); err != nil {
			return res, fail("stage: %w", err)
		}
	}

	hash, size, err := hashSynced(staged)
	if err == nil {
		err = atomicfile.SyncDir(dir)
	}
	if err != nil {
		// Unless an earlier run committed a receipt for it, the source goes back to where the user left it.
		var restoreErr error
		if has, rerr := hasReceipt(ctx, s, src); rerr == nil && !has {
			restoreErr = restoreLive(dir, staged, live)
		}
		return res, fail("read staged source: %w", errors.Join(err, restoreErr))
	}

	res, err = commitSource(ctx, s, c, staged, hash, size, now)
	if err != nil {
		// Whether the staged file stays depends only on whether a receipt is durable now: present (a
		// mismatch, or a commit whose acknowledgement was lost) or unknown keeps it for the next run;
		// absent gives it back to the user.
		has, rerr := hasReceipt(ctx, s, src)
		switch {
		case rerr != nil:
			res.committed = true
			return res, fail("%w", errors.Join(err, fmt.Errorf("re-read receipt: %w", rerr)))
		case has:
			res.committed = true
			return res, fail("%w", err)
		default:
			return res, fail("%w", errors.Join(err, restoreLive(dir, staged, live)))
		}
	}

	if err := archiveSource(dir, staged, archive, hash, size); err != nil {
		return res, fail("archive: %w", err)
	}
	if _, err := os.Lstat(live); err == nil {
		return res, fail("%s reappeared after the import: %w", src, ErrImportConflict)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return res, fail("%w", err)
	}
	return res, nil
}

// commitSource is step 6: one synchronous=FULL, BEGIN IMMEDIATE transaction that either verifies an
// existing receipt or inserts the messages of the staged file, the metadata and the receipt together. The file
// is read again as a stream inside the transaction; bytes that no longer hash to hash and size (the file changed
// since it was hashed) roll the transaction back.
func commitSource(ctx context.Context, s *store.ChatStore, c candidate, staged, hash string, size int64, now time.Time) (sourceResult, error) {
	var res sourceResult
	// ImportTx keeps Append's count cache in step with the session's rows the import adds.
	err := s.Seam().ImportTx(ctx, c.key, func(tx *sql.Tx) error {
		var rKey, rHash string
		var rLen int64
		err := tx.QueryRowContext(ctx, `SELECT session_key, source_hash, source_len FROM jsonl_import_receipts
			WHERE source_name = ?`, c.source()).Scan(&rKey, &rHash, &rLen)
		if err == nil {
			if rKey != c.key || rHash != hash || rLen != size {
				return fmt.Errorf("staged source (sha256 %s, %d bytes) vs receipt (key %q, sha256 %s, %d bytes): %w",
					hash, size, rKey, rHash, rLen, ErrReceiptMismatch)
			}
			res.resumed = true
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read receipt: %w", err)
		}
		var exists bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM sessions WHERE session_key = ?)
			OR EXISTS(SELECT 1 FROM session_metadata WHERE session_key = ?)`, c.key, c.key).Scan(&exists); err != nil {
			return err
		}
		if exists {
			return fmt.Errorf("session %q already has rows in the database (never merged): %w", c.key, ErrImportConflict)
		}
		ts := store.FormatTime(now)
		stmt, err := tx.PrepareContext(ctx, "INSERT INTO sessions (session_key, role, content, created_at) VALUES (?, ?, ?, ?)")
		if err != nil {
			return err
		}
		defer stmt.Close()
		f, err := openSource(staged)
		if err != nil {
			return err
		}
		defer f.Close()
		h := sha256.New()
		n := 0
		skip := func(line int, reason string) {
			if len(res.skipped) < maxSkippedPerSource {
				res.skipped = append(res.skipped, SkippedLine{Source: c.source(), Line: line, Reason: reason})
			} else {
				res.skippedMore++
			}
		}
		hasContent, read, err := eachJSONLLine(io.TeeReader(f, h), MaxLineBytes, func(line int, text []byte) error {
			if text == nil {
				skip(line, fmt.Sprintf("line longer than %d bytes", MaxLineBytes))
				return nil
			}
			role, content, ok := decodeJSONLLine(text)
			if !ok {
				return nil
			}
			if why := importableRole(role, content); why != "" {
				skip(line, why)
				res.messages = -1 // a parsed line: the source is not "without valid messages"
				return nil
			}
			if _, err := stmt.ExecContext(ctx, c.key, role, content, ts); err != nil {
				return err
			}
			n++
			return nil
		})
		if err != nil {
			return err
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != hash || read != size {
			return fmt.Errorf("staged source changed while importing (sha256 %s, %d bytes; hashed %s, %d bytes): %w",
				got, read, hash, size, ErrReceiptMismatch)
		}
		if n == 0 && res.messages == 0 && hasContent {
			return ErrNoValidMessages
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO session_metadata (session_key, created_at, last_activity,
			message_count) VALUES (?, ?, ?, ?)`, c.key, ts, ts, n); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO jsonl_import_receipts (source_name, session_key, source_hash,
			source_len, imported_at) VALUES (?, ?, ?, ?, ?)`, c.source(), c.key, hash, size, ts); err != nil {
			return err
		}
		res.inserted, res.messages = true, n
		return nil
	})
	if err != nil {
		return sourceResult{}, err
	}
	res.committed = true
	return res, nil
}

// importableRole returns "" for a line the import takes, or why it is skipped. The roles this program stores
// are user, assistant and tool (agent/history.go); a stored tool row is a JSON object with a
// "zeroclaw_tool_result" key. A system line would become a system prompt the model obeys, and any other role
// has no meaning here: neither is imported.
func importableRole(role, content string) string {
	switch role {
	case "user", "assistant":
		return ""
	case "tool":
		var row map[string]json.RawMessage
		if strings.HasPrefix(strings.TrimSpace(content), "{") && json.Unmarshal([]byte(content), &row) == nil {
			if _, ok := row["zeroclaw_tool_result"]; ok {
				return ""
			}
		}
		return `role "tool" not in this program's stored form: not imported`
	}
	if len(role) > 32 {
		role = role[:32] + "..."
	}
	return fmt.Sprintf("role %q not imported (only user, assistant and this program's tool rows are)", role)
}

func hasReceipt(ctx context.Context, s *store.ChatStore, source string) (bool, error) {
	var has bool
	err := s.Seam().Writer().QueryRowContext(ctx, "SELECT EXISTS(SELECT 1 FROM jsonl_import_receipts WHERE source_name = ?)",
		source).Scan(&has)
	return has, err
}

type jsonlMessage struct{ role, content string }

// parseJSONL reads the messages of a JSONL session file (eachJSONLMessage). hasContent reports whether any line is
// not whitespace (a skipped line counts).
func parseJSONL(data []byte) (msgs []jsonlMessage, hasContent bool) {
	hasContent = eachJSONLMessage(data, func(role, content string, _ map[string]json.RawMessage) {
		msgs = append(msgs, jsonlMessage{role: role, content: content})
	})
	return msgs, hasContent
}

// eachJSONLMessage calls fn, in order, for each message of a JSONL session file: one {"role":..., "content":...}
// object per line, both strings and the role non-empty; obj is the whole decoded line. Blank lines are ignored;
// non-UTF-8 lines, unparsable JSON and objects without those fields are skipped. It reports whether any line is
// not whitespace.
func eachJSONLMessage(data []byte, fn func(role, content string, obj map[string]json.RawMessage)) (hasContent bool) {
	for len(data) > 0 {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte("\n"))
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		hasContent = true
		if obj, role, content, ok := decodeJSONLObject(line); ok {
			fn(role, content, obj)
		}
	}
	return hasContent
}

// decodeJSONLLine decodes one non-blank line of a JSONL session file (decodeJSONLObject).
func decodeJSONLLine(line []byte) (role, content string, ok bool) {
	_, role, content, ok = decodeJSONLObject(line)
	return role, content, ok
}

// decodeJSONLObject decodes a {"role":..., "content":...} line: both strings, the role non-empty; not ok for a
// non-UTF-8 line, unparsable JSON or an object without those fields.
func decodeJSONLObject(line []byte) (obj map[string]json.RawMessage, role, content string, ok bool) {
	if !utf8.Valid(line) {
		return nil, "", "", false
	}
	// A map, not a struct: field names match exactly, as in the upstream format.
	if json.Unmarshal(line, &obj) != nil {
		return nil, "", "", false
	}
	if json.Unmarshal(obj["role"], &role) != nil || json.Unmarshal(obj["content"], &content) != nil ||
		role == "" || !isJSONString(obj["content"]) {
		return nil, "", "", false
	}
	return obj, role, content, true
}

// isJSONString reports whether raw is a JSON string (not null, which would decode to "").
func isJSONString(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '"' }

// eachJSONLLine reads r line by line and calls fn with each line that is not blank, trimmed, and its 1-based
// number. A line longer than max bytes (not counting leading blanks and the line end) is never held whole: fn gets it as nil. It returns whether
// any line was not whitespace, the bytes read, and the first error of r or fn.
func eachJSONLLine(r io.Reader, max int, fn func(line int, text []byte) error) (hasContent bool, read int64, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	for n := 1; ; n++ {
		buf = buf[:0]
		tooLong, end := false, false
		for {
			chunk, rerr := br.ReadSlice('\n')
			read += int64(len(chunk))
			if !tooLong {
				buf = append(buf, chunk...)
				if len(buf) > max {
					// Leading blanks are not part of the line's length (a run of blank space is a blank line).
					buf = append(buf[:0], bytes.TrimLeft(buf, " \t\r\n\v\f")...)
					if tooLong = len(bytes.TrimRight(buf, "\r\n")) > max; tooLong {
						buf = buf[:0] // the rest of the line is read and hashed, never kept
					}
				}
			}
			if rerr == bufio.ErrBufferFull {
				continue
			}
			if rerr == io.EOF {
				end = true
			} else if rerr != nil {
				return hasContent, read, rerr
			}
			break
		}
		var text []byte
		if !tooLong {
			if text = bytes.TrimSpace(buf); len(text) == 0 {
				if end {
					return hasContent, read, nil
				}
				continue
			}
		}
		hasContent = true
		if err := fn(n, text); err != nil {
			return hasContent, read, err
		}
		if end {
			return hasContent, read, nil
		}
	}
}

// hashSynced fsyncs the file at p and returns the lowercase hex SHA-256 of its bytes and their count, read as a
// stream from the same descriptor.
func hashSynced(p string) (string, int64, error) {
	f, err := openSource(p)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return "", 0, err
	}
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// openSource opens a staged source for reading: never through a symbolic link, never waiting on a FIFO, and
// only if what it opened is a regular file. The scan refuses both, but the entry may have been replaced since.
func openSource(p string) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file (%s): %w", filepath.Base(p), info.Mode().Type(), store.ErrInvalid)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// restoreLive renames the staged source back to its live name, unless a live file exists (never clobbered).
func restoreLive(dir, staged, live string) error {
	if _, err := os.Lstat(live); err == nil {
		return fmt.Errorf("not restored: %s reappeared: %w", filepath.Base(live), ErrImportConflict)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Rename(staged, live); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	return atomicfile.SyncDir(dir)
}

// archiveSource is step 9: make X.jsonl.migrated hold exactly the receipt's bytes (an existing archive must
// already match; a new one is a hard link, never a clobber), then remove the staged file.
func archiveSource(dir, staged, archive, hash string, size int64) error {
	if _, err := os.Lstat(archive); err == nil {
		h, n, err := store.FileSHA256(archive)
		if err != nil {
			return err
		}
		if h != hash || n != size {
			return fmt.Errorf("existing %s (sha256 %s, %d bytes): %w", filepath.Base(archive), h, n, ErrReceiptMismatch)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	} else {
		if err := os.Link(staged, archive); err != nil {
			return err
		}
		if err := atomicfile.SyncDir(dir); err != nil {
			return err
		}
		h, n, err := store.FileSHA256(archive)
		if err != nil {
			return err
		}
		if h != hash || n != size {
			return errors.Join(fmt.Errorf("%s changed while archiving (sha256 %s, %d bytes): %w",
				filepath.Base(archive), h, n, ErrReceiptMismatch), os.Remove(archive))
		}
	}
	if err := os.Remove(staged); err != nil {
		return err
	}
	return atomicfile.SyncDir(dir)
}
