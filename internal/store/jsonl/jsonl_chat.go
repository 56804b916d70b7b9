package jsonl

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/zeroclaw-go/zeroclaw/internal/atomicfile"
)

var (
	_ store.Chat = (*store.ChatStore)(nil)
	_ store.Chat = (*Chat)(nil)
)

// MetaName is the file, in the sessions directory, where the JSONL backend keeps what upstream's JSONL files
// cannot hold: each session's metadata, turn state and owner. It is a chat database whose message table stays
// empty; the messages are the files.
const MetaName = "jsonl-meta.db"

// Chat is the JSONL chat backend (state.md §4): session key K's messages are the lines of
// <dir>/<sanitized K>.jsonl, one {"role", "content", "created_at"} object each (upstream reads the first two and
// ignores the third). Appends use O_APPEND and fsync before returning, so an acknowledged message survives a
// crash; a line torn by a crash is skipped on load, like any blank or corrupt line, and the next append starts
// on a fresh line. Session metadata lives in MetaName. Mutations take the process-wide lock of the
// directory (the same one the JSONL import takes).
//
// Files found at open without metadata (written by upstream's JSONL backend) are adopted: they get a metadata
// row naming no agent, as the SQLite import gives them.
type Chat struct {
	dir  string
	meta *store.ChatStore

	mu     sync.Mutex // guards counts
	counts map[string]fileCount
}

// fileCount is a session file's message count at a given size: valid while the file has that size.
type fileCount struct {
	size  int64
	count int
}

// Open opens the JSONL backend on sessions directory dir (created with mode 0700) and adopts the files
// that have no metadata yet, stamped with their modification time.
func Open(ctx context.Context, dir string) (*Chat, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("store: open jsonl sessions %s: %w", dir, err)
	}
	meta, err := store.OpenChat(ctx, filepath.Join(dir, MetaName))
	if err != nil {
		return nil, err
	}
	c := &Chat{dir: dir, meta: meta, counts: make(map[string]fileCount)}
	if err := c.adopt(ctx); err != nil {
		_ = meta.Close()
		return nil, err
	}
	return c, nil
}

// FileName is the file name of session key's messages: every character that is not an ASCII letter or
// digit, '_' or '-' becomes '_' (upstream's rule; two keys differing only there share a file, as upstream's do).
func FileName(key string) string {
	b := []byte(key)
	for i, ch := range b {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '_' || ch == '-') {
			b[i] = '_'
		}
	}
	return string(b) + jsonlExt
}

func (c *Chat) path(key string) string { return filepath.Join(c.dir, FileName(key)) }

// claim takes the directory lock for a call that may create session key, and refuses (store.ErrInvalid) a key
// without metadata whose file already belongs to another session: keys that differ only in the bytes
// FileName replaces ("s.1", "s_1", "s:1") would share one file, so a principal opening one would read and
// write the messages of another's session. The caller calls unlock when done (only when err is nil).
func (c *Chat) claim(ctx context.Context, op, key string) (unlock func(), err error) {
	unlock, err = lockJSONLDir(c.dir)
	if err != nil {
		return nil, fmt.Errorf("store: %s %s: %w", op, key, err)
	}
	if err := c.fileFree(ctx, key); err != nil {
		unlock()
		return nil, fmt.Errorf("store: %s %s: %w", op, key, err)
	}
	return unlock, nil
}

// fileFree is nil when key has metadata, or when no other session's key has key's file name.
func (c *Chat) fileFree(ctx context.Context, key string) error {
	if _, err := c.meta.Meta(ctx, key); err == nil {
		return nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	// FileName keeps the byte length: only keys of key's length in bytes can share its file.
	rows, err := c.meta.Seam().Reader().QueryContext(ctx, `SELECT session_key FROM session_metadata
		WHERE length(CAST(session_key AS BLOB)) = ? AND session_key != ?`, len(key), key)
	if err != nil {
		return err
	}
	defer rows.Close()
	name := FileName(key)
	for rows.Next() {
		var other string
		if err := rows.Scan(&other); err != nil {
			return err
		}
		if FileName(other) == name {
			return fmt.Errorf("its file %s already holds session %q: %w", name, other, store.ErrInvalid)
		}
	}
	return rows.Err()
}

// adopt gives every <key>.jsonl without a metadata row one (created_at = last_activity = the file's mtime).
func (c *Chat) adopt(ctx context.Context) error {
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return fmt.Errorf("store: open jsonl sessions %s: %w", c.dir, err)
	}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasSuffix(name, jsonlExt) || !utf8.ValidString(name) {
			continue
		}
		key := strings.TrimSuffix(name, jsonlExt)
		if key == "" || FileName(key) != name {
			continue
		}
		if _, err := c.meta.Meta(ctx, key); err == nil {
			continue
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return fmt.Errorf("store: open jsonl sessions: %s: %w", name, err)
		}
		if _, _, err := c.meta.EnsureSession(ctx, key, "", "", info.ModTime().UTC()); err != nil {
			return err
		}
	}
	return nil
}

// EnsureSession records the session's metadata (store.ChatStore.EnsureSession); its file appears with its first message.
func (c *Chat) EnsureSession(ctx context.Context, key, agentAlias, owner string, now time.Time) (store.SessionMeta, bool, error) {
	unlock, err := c.claim(ctx, "ensure session", key)
	if err != nil {
		return store.SessionMeta{}, false, err
	}
	m, existed, err := c.meta.EnsureSession(ctx, key, agentAlias, owner, now)
	unlock()
	if err != nil {
		return m, existed, err
	}
	m, err = c.withCount(m)
	return m, existed, err
}

// jsonlLine is one line of a session file.
type jsonlLine struct {
	Role      string `json:"role"`
	Content   string `json:"content"`
	CreatedAt string `json:"created_at,omitempty"`
}

// Append writes one line to the session's file (created with mode 0600, never through a symlink), fsyncs it,
// then records the activity in the metadata, and returns the message's index.
func (c *Chat) Append(ctx context.Context, key, role, content string, now time.Time) (int, error) {
	if key == "" {
		return 0, fmt.Errorf("store: append: empty session key: %w", store.ErrInvalid)
	}
	if role == "" {
		return 0, fmt.Errorf("store: append %s: empty role: %w", key, store.ErrInvalid)
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("store: append %s: %w", key, err)
	}
	line, err := json.Marshal(jsonlLine{Role: role, Content: content, CreatedAt: store.FormatTime(now)})
	if err != nil {
		return 0, fmt.Errorf("store: append %s: %w", key, err)
	}
	unlock, err := c.claim(ctx, "append", key)
	if err != nil {
		return 0, err
	}
	defer unlock()
	idx, err := c.appendLocked(key, line)
	if err != nil {
		return 0, fmt.Errorf("store: append %s: %w", key, err)
	}
	if err := c.meta.Seam().Touch(ctx, key, now); err != nil {
		return 0, fmt.Errorf("store: append %s: the message is stored, its metadata not: %w", key, err)
	}
	return idx, nil
}

func (c *Chat) appendLocked(key string, line []byte) (int, error) {
	p := c.path(key)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_APPEND|os.O_CREATE|oNoFollow, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if !info.Mode().IsRegular() {
		return 0, fmt.Errorf("%s is not a regular file", filepath.Base(p))
	}
	created := info.Size() == 0
	n, tail, err := c.count(key, f, info.Size())
	if err != nil {
		return 0, err
	}
	buf := make([]byte, 0, len(line)+2)
	if tail { // a torn last line (crash mid-write): start this one on a line of its own
		buf = append(buf, '\n')
	}
	buf = append(append(buf, line...), '\n')
	if _, err := f.Write(buf); err != nil {
		c.forget(key)
		return 0, err
	}
	if err := f.Sync(); err != nil {
		c.forget(key)
		return 0, err
	}
	if created {
		if err := atomicfile.SyncDir(c.dir); err != nil {
			c.forget(key)
			return 0, err
		}
	}
	c.mu.Lock()
	c.counts[key] = fileCount{size: info.Size() + int64(len(buf)), count: n + 1}
	c.mu.Unlock()
	return n, nil
}

// count returns the number of messages in f (of the given size) and whether its last byte is not a newline;
// cached per size.
func (c *Chat) count(key string, f *os.File, size int64) (n int, tornTail bool, err error) {
	c.mu.Lock()
	fc, ok := c.counts[key]
	c.mu.Unlock()
	if size == 0 {
		return 0, false, nil
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], size-1); err != nil {
		return 0, false, err
	}
	tornTail = last[0] != '\n'
	if ok && fc.size == size {
		return fc.count, tornTail, nil
	}
	data, err := io.ReadAll(io.NewSectionReader(f, 0, size))
	if err != nil {
		return 0, false, err
	}
	return len(parseLines(data, time.Time{})), tornTail, nil
}

func (c *Chat) forget(key string) {
	c.mu.Lock()
	delete(c.counts, key)
	c.mu.Unlock()
}

// parseLines reads a session file's messages (eachJSONLMessage), indexed from 0. A line without created_at gets
// fallback.
func parseLines(data []byte, fallback time.Time) []store.Message {
	var msgs []store.Message
	eachJSONLMessage(data, func(role, content string, obj map[string]json.RawMessage) {
		m := store.Message{Index: len(msgs), Role: role, Content: content, CreatedAt: fallback}
		var ts string
		if raw, ok := obj["created_at"]; ok && json.Unmarshal(raw, &ts) == nil {
			if t, err := store.ParseTime(ts); err == nil {
				m.CreatedAt = t
			}
		}
		msgs = append(msgs, m)
	})
	return msgs
}

// load reads every message of key (none for a session without a file). Lines without created_at are stamped
// with the file's modification time.
func (c *Chat) load(key string) ([]store.Message, error) {
	f, err := os.OpenFile(c.path(key), os.O_RDONLY|oNoFollow, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", filepath.Base(c.path(key)))
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	msgs := parseLines(data, info.ModTime().UTC())
	if int64(len(data)) == info.Size() {
		c.mu.Lock()
		c.counts[key] = fileCount{size: info.Size(), count: len(msgs)}
		c.mu.Unlock()
	}
	return msgs, nil
}

// All returns every message of key, oldest first.
func (c *Chat) All(ctx context.Context, key string) ([]store.Message, error) {
	msgs, err := c.load(key)
	if err != nil {
		return nil, fmt.Errorf("store: messages %s: %w", key, err)
	}
	return msgs, nil
}

// BeginTurn records the session and its running state in the metadata (one transaction), then appends the prompt
// to the session's file. A failure between the two leaves the session marked running without the prompt, which the
// next start reports as an interrupted turn.
func (c *Chat) BeginTurn(ctx context.Context, key, agentAlias, owner, turnID string, started time.Time, prompt string) (int, error) {
	unlock, err := c.claim(ctx, "begin turn", key)
	if err != nil {
		return 0, err
	}
	_, err = c.meta.BeginTurn(ctx, key, agentAlias, owner, turnID, started, "")
	unlock()
	if err != nil {
		return 0, err
	}
	if prompt == "" {
		return -1, nil
	}
	return c.Append(ctx, key, "user", prompt, started)
}

// EndTurn appends the message to the session's file, then records the state in the metadata.
func (c *Chat) EndTurn(ctx context.Context, key, role, content string, now time.Time, state string) (int, error) {
	if state == "" {
		return 0, fmt.Errorf("store: end turn %s: empty state: %w", key, store.ErrInvalid)
	}
	idx, err := c.Append(ctx, key, role, content, now)
	if err != nil {
		return 0, err
	}
	if err := c.meta.SetState(ctx, key, state, "", nil); err != nil {
		return 0, fmt.Errorf("store: end turn %s: the message is stored, the state not: %w", key, err)
	}
	return idx, nil
}

// Page is store.ChatStore.Page over the session's file.
func (c *Chat) Page(ctx context.Context, key string, limit, beforeIndex, maxBytes int) (msgs []store.Message, total, start int, err error) {
	all, err := c.load(key)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("store: page %s: %w", key, err)
	}
	total = len(all)
	end := total
	if beforeIndex >= 0 && beforeIndex < total {
		end = beforeIndex
	}
	start = end
	size := 0
	for i := end - 1; i >= 0; i-- {
		if limit > 0 && end-i > limit {
			break
		}
		if maxBytes > 0 && len(msgs) > 0 && size+len(all[i].Content) > maxBytes {
			break
		}
		size += len(all[i].Content)
		msgs = append(msgs, all[i])
		start = i
	}
	slices.Reverse(msgs)
	return msgs, total, start, nil
}

// Message is store.ChatStore.Message over the session's file.
func (c *Chat) Message(ctx context.Context, key string, index int) (store.Message, int, error) {
	all, err := c.load(key)
	if err != nil {
		return store.Message{}, 0, fmt.Errorf("store: message %s %d: %w", key, index, err)
	}
	if index < 0 || index >= len(all) {
		return store.Message{}, len(all), fmt.Errorf("store: message %s %d: %w", key, index, store.ErrNotFound)
	}
	return all[index], len(all), nil
}

// withCount sets m.MessageCount from the session's file: the file is the truth (the metadata counter can lag
// one message behind after a crash between the two writes).
func (c *Chat) withCount(m store.SessionMeta) (store.SessionMeta, error) {
	n, err := c.fileCount(m.Key)
	if err != nil {
		return store.SessionMeta{}, err
	}
	m.MessageCount = n
	return m, nil
}

func (c *Chat) fileCount(key string) (int, error) {
	info, err := os.Lstat(c.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("store: count %s: %w", key, err)
	}
	c.mu.Lock()
	fc, ok := c.counts[key]
	c.mu.Unlock()
	if ok && fc.size == info.Size() {
		return fc.count, nil
	}
	msgs, err := c.load(key)
	if err != nil {
		return 0, fmt.Errorf("store: count %s: %w", key, err)
	}
	return len(msgs), nil
}

// Meta returns the session's metadata with its count taken from the file.
func (c *Chat) Meta(ctx context.Context, key string) (store.SessionMeta, error) {
	m, err := c.meta.Meta(ctx, key)
	if err != nil {
		return m, err
	}
	m, err = c.withCount(m)
	return m, err
}

// Resolve is store.ChatStore.Resolve, with the count taken from the file.
func (c *Chat) Resolve(ctx context.Context, id string) (store.SessionMeta, error) {
	m, err := c.meta.Resolve(ctx, id)
	if err != nil {
		return m, err
	}
	m, err = c.withCount(m)
	return m, err
}

// List is store.ChatStore.List; a query keeps the sessions with a message containing every word of it (case-folded).
func (c *Chat) List(ctx context.Context, query string, limit int) ([]store.SessionMeta, error) {
	return c.list(ctx, query, limit, c.meta.List)
}

// ListAttributed is store.ChatStore.ListAttributed over the files.
func (c *Chat) ListAttributed(ctx context.Context, query string, limit int) ([]store.SessionMeta, error) {
	return c.list(ctx, query, limit, c.meta.ListAttributed)
}

func (c *Chat) list(ctx context.Context, query string, limit int, rows func(context.Context, string, int) ([]store.SessionMeta, error)) ([]store.SessionMeta, error) {
	words := strings.Fields(strings.ToLower(query))
	n := limit
	if len(words) > 0 {
		n = 0 // filtered below: the limit counts matches
	}
	all, err := rows(ctx, "", n)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, m := range all {
		if len(words) > 0 {
			msgs, err := c.load(m.Key)
			if err != nil {
				return nil, fmt.Errorf("store: list: %w", err)
			}
			if !anyMessageHasAll(msgs, words) {
				continue
			}
		}
		if m, err = c.withCount(m); err != nil {
			return nil, err
		}
		out = append(out, m)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out, nil
}

func anyMessageHasAll(msgs []store.Message, words []string) bool {
	for _, m := range msgs {
		content := strings.ToLower(m.Content)
		all := true
		for _, w := range words {
			if !strings.Contains(content, w) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// SetState is store.ChatStore.SetState.
func (c *Chat) SetState(ctx context.Context, key, state, turnID string, startedAt *time.Time) error {
	return c.meta.SetState(ctx, key, state, turnID, startedAt)
}

// InterruptRunning is store.ChatStore.InterruptRunning.
func (c *Chat) InterruptRunning(ctx context.Context) (int, error) {
	return c.meta.InterruptRunning(ctx)
}

// CountByAgent is store.ChatStore.CountByAgent.
func (c *Chat) CountByAgent(ctx context.Context) (map[string]int, error) {
	return c.meta.CountByAgent(ctx)
}

// RenameAgent is store.ChatStore.RenameAgent.
func (c *Chat) RenameAgent(ctx context.Context, from, to string) (int, error) {
	return c.meta.RenameAgent(ctx, from, to)
}

// Delete removes the session's file (the directory fsynced) and then its metadata. Deleting an unknown session
// succeeds.
func (c *Chat) Delete(ctx context.Context, key string) error {
	if key == "" {
		return fmt.Errorf("store: delete: empty session key: %w", store.ErrInvalid)
	}
	unlock, err := lockJSONLDir(c.dir)
	if err != nil {
		return fmt.Errorf("store: delete %s: %w", key, err)
	}
	defer unlock()
	c.forget(key)
	if err := os.Remove(c.path(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("store: delete %s: %w", key, err)
	}
	if err := atomicfile.SyncDir(c.dir); err != nil {
		return fmt.Errorf("store: delete %s: %w", key, err)
	}
	return c.meta.Delete(ctx, key)
}

// Close closes the metadata database.
func (c *Chat) Close() error { return c.meta.Close() }

// AdoptMeta carries the JSONL backend's metadata (MetaName in dir) over to s after a switch back to
// SQLite, once ImportDir has moved the files in: for each session the JSONL backend knew whose file is no longer
// live in dir (imported, or never written because it had no message), s's metadata row gets the agent, name and
// creation time it lacks (or is created, for a session without messages) and the owner when it has none; then the
// row leaves the JSONL metadata, so switching to JSONL again does not show it twice. Sessions whose file is still
// live (its import failed) stay where they are. A missing MetaName is nothing to do. It returns how many
// sessions were carried over.
func AdoptMeta(ctx context.Context, s *store.ChatStore, dir string) (int, error) {
	p := filepath.Join(dir, MetaName)
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	} else if err != nil {
		return 0, fmt.Errorf("store: adopt jsonl metadata: %w", err)
	}
	side, err := store.OpenChat(ctx, p)
	if err != nil {
		return 0, fmt.Errorf("store: adopt jsonl metadata: %w", err)
	}
	defer side.Close()
	rows, err := side.List(ctx, "", 0)
	if err != nil {
		return 0, fmt.Errorf("store: adopt jsonl metadata: %w", err)
	}
	n := 0
	for _, m := range rows {
		if _, err := os.Lstat(filepath.Join(dir, FileName(m.Key))); err == nil {
			continue // still live: its import failed and it stays a JSONL session
		} else if !errors.Is(err, fs.ErrNotExist) {
			return n, fmt.Errorf("store: adopt jsonl metadata %s: %w", m.Key, err)
		}
		// The import keyed the session by its file name: the same key unless sanitizing changed it.
		key := strings.TrimSuffix(FileName(m.Key), jsonlExt)
		err := s.Seam().WithTx(ctx, func(tx *sql.Tx) error {
			created, last := store.FormatTime(m.CreatedAt), store.FormatTime(m.LastActivity)
			if _, err := tx.ExecContext(ctx, `INSERT INTO session_metadata
				(session_key, created_at, last_activity, message_count, name, agent_alias) VALUES (?, ?, ?, 0, ?, ?)
				ON CONFLICT(session_key) DO UPDATE SET
					created_at = excluded.created_at,
					name = COALESCE(session_metadata.name, excluded.name),
					agent_alias = COALESCE(NULLIF(session_metadata.agent_alias, ''), excluded.agent_alias)`,
				key, created, last, store.NullString(m.Name), store.NullString(m.AgentAlias)); err != nil {
				return err
			}
			if m.Owner == "" {
				return nil
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO session_owners (session_key, principal) VALUES (?, ?)
				ON CONFLICT(session_key) DO NOTHING`, key, m.Owner)
			return err
		})
		if err != nil {
			return n, fmt.Errorf("store: adopt jsonl metadata %s: %w", m.Key, err)
		}
		if err := side.Delete(ctx, m.Key); err != nil {
			return n, fmt.Errorf("store: adopt jsonl metadata %s: %w", m.Key, err)
		}
		n++
	}
	return n, nil
}
