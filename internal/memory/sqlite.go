package memory

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/zeroclaw-go/zeroclaw/internal/groupcommit"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// sqlitePragmas are upstream's pragmas for brain.db that the store's common ones (busy timeout, WAL, NORMAL
// sync, foreign keys) leave out.
const sqlitePragmas = "_pragma=mmap_size(8388608)&_pragma=cache_size(-2000)&_pragma=temp_store(MEMORY)"

// SQLite is the brain.db backend: one install-wide file, rows scoped by agent_id (upstream/memory.md §2).
type SQLite struct {
	path   string
	conns  *store.Conns
	w      *sql.DB // one connection: writes are serialized
	r      *sql.DB // readers
	rs     *stmtCache
	now    func() time.Time
	upsert *sql.Stmt              // Store's statement, prepared on w
	group  *groupcommit.Committer // Store: concurrent turns' auto-saves share a commit

	agentsMu sync.Mutex        // guards agentIDs
	agentIDs map[string]string // alias => id of the agents rows read or created; a row's id never changes
}

// OpenSQLite opens (creating if needed) the memory database at path with upstream's schema: an upstream
// brain.db opens as it is, one from before agent scoping is rebuilt (after a backup copy) as upstream does. The
// file is opened as every database of the install is (store.OpenSQLite): memories are private (mode 0600).
func OpenSQLite(ctx context.Context, path string, now func() time.Time) (*SQLite, error) {
	if path == "" || strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("%w: database path %q", ErrInvalid, path)
	}
	c, err := store.OpenSQLite(ctx, path, sqlitePragmas)
	if err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	s := &SQLite{path: path, conns: c, w: c.W, r: c.R, rs: &stmtCache{db: c.R}, now: now}
	if err := s.init(ctx, now()); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("memory: open %s: %w", path, err)
	}
	if s.upsert, err = s.w.PrepareContext(ctx, sqlStore); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("memory: open %s: %w", path, err)
	}
	if s.group, err = groupcommit.New(ctx, s.w, 0, 0, groupcommit.Hooks{}); err != nil {
		_ = s.upsert.Close()
		_ = c.Close()
		return nil, fmt.Errorf("memory: open %s: %w", path, err)
	}
	return s, nil
}

// Kind implements Backend.
func (s *SQLite) Kind() string { return KindSQLite }

// Close implements Backend.
func (s *SQLite) Close() error {
	s.rs.close()
	s.group.Close()
	return errors.Join(s.upsert.Close(), s.conns.Close())
}

// The base schema as upstream's init_schema creates it: the pre-agent table shape (the V3 rebuild follows),
// FTS5 over key and content with its three sync triggers, the embedding cache and the metadata table.
const sqliteBaseSchema = `
CREATE TABLE IF NOT EXISTS memories (
    id          TEXT PRIMARY KEY,
    key         TEXT NOT NULL UNIQUE,
    content     TEXT NOT NULL,
    category    TEXT NOT NULL DEFAULT 'core',
    embedding   BLOB,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_memories_category ON memories(category);
CREATE INDEX IF NOT EXISTS idx_memories_key ON memories(key);
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
    key, content, content=memories, content_rowid=rowid
);
CREATE TRIGGER IF NOT EXISTS memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, key, content)
    VALUES (new.rowid, new.key, new.content);
END;
CREATE TRIGGER IF NOT EXISTS memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, key, content)
    VALUES ('delete', old.rowid, old.key, old.content);
END;
CREATE TRIGGER IF NOT EXISTS memories_au AFTER UPDATE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, key, content)
    VALUES ('delete', old.rowid, old.key, old.content);
    INSERT INTO memories_fts(rowid, key, content)
    VALUES (new.rowid, new.key, new.content);
END;
CREATE TABLE IF NOT EXISTS embedding_cache (
    content_hash TEXT PRIMARY KEY,
    embedding    BLOB NOT NULL,
    created_at   TEXT NOT NULL,
    accessed_at  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_cache_accessed ON embedding_cache(accessed_at);
CREATE TABLE IF NOT EXISTS memory_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);`

// sqliteLateColumns are added to memories when missing, in upstream's order, each followed by its index.
var sqliteLateColumns = [][3]string{
	{"session_id", "TEXT", "CREATE INDEX IF NOT EXISTS idx_memories_session ON memories(session_id)"},
	{"namespace", "TEXT DEFAULT 'default'", "CREATE INDEX IF NOT EXISTS idx_memories_namespace ON memories(namespace)"},
	{"importance", "REAL DEFAULT 0.5", ""},
	{"superseded_by", "TEXT", ""},
	{"kind", "TEXT", ""},
	{"pinned", "INTEGER NOT NULL DEFAULT 0", ""},
	{"tenant_id", "TEXT", "CREATE INDEX IF NOT EXISTS idx_memories_namespace_category ON memories(namespace, category)"},
}

// The agent-scoped (V3) table rebuild, as upstream's migrate_sqlite_memory_to_v3 runs it.
const sqliteV3Rebuild = `
DROP TRIGGER IF EXISTS memories_ai;
DROP TRIGGER IF EXISTS memories_ad;
DROP TRIGGER IF EXISTS memories_au;
DROP TABLE IF EXISTS memories_fts;
CREATE TABLE memories_new (
    id            TEXT PRIMARY KEY,
    key           TEXT NOT NULL,
    content       TEXT NOT NULL,
    category      TEXT NOT NULL DEFAULT 'core',
    embedding     BLOB,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    session_id    TEXT,
    namespace     TEXT DEFAULT 'default',
    importance    REAL DEFAULT 0.5,
    superseded_by TEXT,
    agent_id      TEXT NOT NULL REFERENCES agents(id),
    UNIQUE (agent_id, key)
);
INSERT INTO memories_new (
    id, key, content, category, embedding, created_at, updated_at,
    session_id, namespace, importance, superseded_by, agent_id
)
SELECT
    id, key, content, category, embedding, created_at, updated_at,
    session_id, namespace, importance, superseded_by, agent_id
FROM memories;
DROP TABLE memories;
ALTER TABLE memories_new RENAME TO memories;
CREATE INDEX IF NOT EXISTS idx_memories_category  ON memories(category);
CREATE INDEX IF NOT EXISTS idx_memories_key       ON memories(key);
CREATE INDEX IF NOT EXISTS idx_memories_session   ON memories(session_id);
CREATE INDEX IF NOT EXISTS idx_memories_namespace ON memories(namespace);
CREATE INDEX IF NOT EXISTS idx_memories_agent_id  ON memories(agent_id);
CREATE VIRTUAL TABLE memories_fts USING fts5(
    key, content, content=memories, content_rowid=rowid
);
INSERT INTO memories_fts(memories_fts) VALUES('rebuild');
CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, key, content)
    VALUES (new.rowid, new.key, new.content);
END;
CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, key, content)
    VALUES ('delete', old.rowid, old.key, old.content);
END;
CREATE TRIGGER memories_au AFTER UPDATE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, key, content)
    VALUES ('delete', old.rowid, old.key, old.content);
    INSERT INTO memories_fts(rowid, key, content)
    VALUES (new.rowid, new.key, new.content);
END;
CREATE TABLE IF NOT EXISTS schema_version (
    component  TEXT PRIMARY KEY,
    version    INTEGER NOT NULL,
    applied_at TEXT NOT NULL
);`

// init runs upstream's open sequence: base schema, V3 rebuild when the table is not agent-scoped yet, base
// schema again (the late columns the rebuild does not copy), then session-id normalization.
func (s *SQLite) init(ctx context.Context, now time.Time) error {
	if err := s.initSchema(ctx); err != nil {
		return err
	}
	scoped, err := s.agentScoped(ctx)
	if err != nil {
		return err
	}
	if !scoped {
		if err := s.migrateV3(ctx, now); err != nil {
			return fmt.Errorf("agent-scoping migration: %w", err)
		}
		if err := s.initSchema(ctx); err != nil {
			return err
		}
	}
	return s.normalizeSessionIDs(ctx)
}

func (s *SQLite) initSchema(ctx context.Context) error {
	if _, err := s.w.ExecContext(ctx, sqliteBaseSchema); err != nil {
		return fmt.Errorf("base schema: %w", err)
	}
	have, err := s.columns(ctx)
	if err != nil {
		return err
	}
	for _, c := range sqliteLateColumns {
		if _, ok := have[c[0]]; !ok {
			if _, err := s.w.ExecContext(ctx, "ALTER TABLE memories ADD COLUMN "+c[0]+" "+c[1]); err != nil {
				return fmt.Errorf("add column memories.%s: %w", c[0], err)
			}
		}
		if c[2] != "" {
			if _, err := s.w.ExecContext(ctx, c[2]); err != nil {
				return err
			}
		}
	}
	return nil
}

// columns maps each column of memories to whether it is NOT NULL.
func (s *SQLite) columns(ctx context.Context) (map[string]bool, error) {
	rows, err := s.w.QueryContext(ctx, "SELECT name, \"notnull\" FROM pragma_table_info('memories')")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var name string
		var notnull int
		if err := rows.Scan(&name, &notnull); err != nil {
			return nil, err
		}
		out[name] = notnull != 0
	}
	return out, rows.Err()
}

// agentScoped reports whether memories already has the V3 shape: agent_id NOT NULL referencing agents, and a
// unique index on exactly (agent_id, key).
func (s *SQLite) agentScoped(ctx context.Context) (bool, error) {
	cols, err := s.columns(ctx)
	if notnull, ok := cols["agent_id"]; err != nil || !ok || !notnull {
		return false, err
	}
	var fk int
	if err := s.w.QueryRowContext(ctx, `SELECT count(*) FROM pragma_foreign_key_list('memories')
		WHERE "table" = 'agents' AND "from" = 'agent_id'`).Scan(&fk); err != nil || fk == 0 {
		return false, err
	}
	var uniq int
	err = s.w.QueryRowContext(ctx, `SELECT count(*) FROM pragma_index_list('memories') l
		WHERE l."unique" = 1
		  AND (SELECT count(*) FROM pragma_index_info(l.name)) = 2
		  AND (SELECT count(*) FROM pragma_index_info(l.name) i WHERE i.name IN ('agent_id', 'key')) = 2`).Scan(&uniq)
	return uniq > 0, err
}

func (s *SQLite) migrateV3(ctx context.Context, now time.Time) error {
	var n int
	if err := s.w.QueryRowContext(ctx, "SELECT count(*) FROM memories").Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		if err := s.backupFile(ctx, now); err != nil {
			return err
		}
	}
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE; PRAGMA defer_foreign_keys = ON;"); err != nil {
		return err
	}
	err = func() error {
		if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS agents (
            id          TEXT PRIMARY KEY,
            alias       TEXT NOT NULL UNIQUE,
            created_at  TEXT NOT NULL
         )`); err != nil {
			return err
		}
		def, err := ensureAgentSQL(ctx, conn, "default", now)
		if err != nil {
			return err
		}
		cols, err := s.columnsOn(ctx, conn)
		if err != nil {
			return err
		}
		if _, ok := cols["agent_id"]; !ok {
			if _, err := conn.ExecContext(ctx, "ALTER TABLE memories ADD COLUMN agent_id TEXT"); err != nil {
				return err
			}
		}
		if _, err := conn.ExecContext(ctx, "UPDATE memories SET agent_id = ? WHERE agent_id IS NULL", def); err != nil {
			return err
		}
		if _, err := conn.ExecContext(ctx, sqliteV3Rebuild); err != nil {
			return err
		}
		_, err = conn.ExecContext(ctx, "INSERT OR REPLACE INTO schema_version (component, version, applied_at) VALUES ('memories', 1, ?)",
			now.UTC().Format(time.RFC3339Nano))
		return err
	}()
	if err != nil {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return err
	}
	_, err = conn.ExecContext(ctx, "COMMIT")
	return err
}

func (s *SQLite) columnsOn(ctx context.Context, conn *sql.Conn) (map[string]bool, error) {
	rows, err := conn.QueryContext(ctx, "SELECT name FROM pragma_table_info('memories')")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		out[name] = true
	}
	return out, rows.Err()
}

// backupFile copies brain.db to brain.db.backup-<YYYYMMDDTHHMMSS> before the rebuild, with VACUUM INTO on the
// writer: the copy holds every committed row, and brain.db itself is never opened as a file, which would drop
// this process's SQLite locks on it (package dbfile). An existing backup of that second is kept.
func (s *SQLite) backupFile(ctx context.Context, now time.Time) error {
	dest := s.path + ".backup-" + now.UTC().Format("20060102T150405")
	// VACUUM INTO fills an empty file: reserving the name first keeps an existing backup.
	out, err := os.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	if _, err := s.w.ExecContext(ctx, "VACUUM INTO ?", dest); err != nil {
		_ = os.Remove(dest)
		return err
	}
	f, err := os.OpenFile(dest, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

// normalizeSessionIDs rewrites session ids to upstream's sanitized form, as every upstream open does.
func (s *SQLite) normalizeSessionIDs(ctx context.Context) error {
	rows, err := s.w.QueryContext(ctx, "SELECT DISTINCT session_id FROM memories WHERE session_id IS NOT NULL")
	if err != nil {
		return err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			_ = rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	for _, id := range ids {
		if clean := SanitizeSessionKey(id); clean != id {
			if _, err := s.w.ExecContext(ctx, "UPDATE memories SET session_id = ? WHERE session_id = ?", clean, id); err != nil {
				return err
			}
		}
	}
	return nil
}

// SanitizeSessionKey replaces every character that is not a letter, a digit, '_' or '-' with '_' (upstream's
// session key form for memory rows). It is idempotent.
func SanitizeSessionKey(k string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, k)
}

type execQuerier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func ensureAgentSQL(ctx context.Context, db execQuerier, alias string, now time.Time) (string, error) {
	if _, err := db.ExecContext(ctx, "INSERT OR IGNORE INTO agents (id, alias, created_at) VALUES (?, ?, ?)",
		newUUID(), alias, now.UTC().Format(time.RFC3339Nano)); err != nil {
		return "", err
	}
	var id string
	err := db.QueryRowContext(ctx, "SELECT id FROM agents WHERE alias = ? LIMIT 1", alias).Scan(&id)
	return id, err
}

// EnsureAgent implements Backend.
func (s *SQLite) EnsureAgent(ctx context.Context, alias string) (string, error) {
	// Every turn asks; an agent's row, once there, keeps its id (nothing deletes or renames agents rows, here or
	// upstream), so it is looked up once per process: from the reader pool first, and only a new agent takes the
	// writer.
	s.agentsMu.Lock()
	id, ok := s.agentIDs[alias]
	s.agentsMu.Unlock()
	if ok {
		return id, nil
	}
	err := s.rs.QueryRowContext(ctx, "SELECT id FROM agents WHERE alias = ? LIMIT 1", alias).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		id, err = ensureAgentSQL(ctx, s.w, alias, s.now())
	}
	if err != nil {
		return "", fmt.Errorf("memory: agent %q: %w", alias, err)
	}
	s.agentsMu.Lock()
	if s.agentIDs == nil || len(s.agentIDs) >= maxCachedAgents {
		s.agentIDs = make(map[string]string)
	}
	s.agentIDs[alias] = id
	s.agentsMu.Unlock()
	return id, nil
}

// maxCachedAgents bounds the agent id cache; past it the cache starts over.
const maxCachedAgents = 1024

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
