package memory

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

const sqliteEntryCols = `m.id, m.key, m.content, m.category, m.created_at, m.session_id, m.namespace, m.importance,
	m.superseded_by, m.kind, m.pinned, a.alias, m.agent_id, m.tenant_id`

const sqliteFrom = ` FROM memories m LEFT JOIN agents a ON a.id = m.agent_id`

func scanEntry(sc interface{ Scan(...any) error }) (Entry, error) {
	var e Entry
	var sid, ns, sup, kind, alias, aid, tenant sql.NullString
	var imp sql.NullFloat64
	var pinned sql.NullInt64
	if err := sc.Scan(&e.ID, &e.Key, &e.Content, &e.Category, &e.Timestamp, &sid, &ns, &imp, &sup, &kind, &pinned,
		&alias, &aid, &tenant); err != nil {
		return e, err
	}
	e.SessionID, e.SupersededBy, e.AgentAlias, e.AgentID, e.TenantID = nullable(sid), nullable(sup), nullable(alias), nullable(aid), nullable(tenant)
	e.Namespace = orDefault(ns.String, "default")
	if imp.Valid {
		e.Importance = ptr(imp.Float64)
	}
	if kind.Valid {
		e.Kind = rawKind(kind.String)
	}
	e.Pinned = pinned.Int64 != 0
	return e, nil
}

func nullable(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return ptr(s.String)
}

// inAgents renders "AND m.agent_id IN (?, ...)" for agents (nothing for nil) and appends the arguments.
func inAgents(agents []string, args []any) (string, []any) {
	if agents == nil {
		return "", args
	}
	if len(agents) == 0 {
		return " AND 0", args
	}
	for _, a := range agents {
		args = append(args, a)
	}
	return " AND m.agent_id IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(agents)), ", ") + ")", args
}

// sqlStore is upstream's upsert on (agent_id, key), keeping created_at.
const sqlStore = `INSERT INTO memories
	(id, key, content, category, embedding, created_at, updated_at, session_id, namespace, importance, kind, pinned, tenant_id, agent_id)
	VALUES (?, ?, ?, ?, NULL, ?, ?, ?, ?, 0.5, NULL, 0, NULL, ?)
	ON CONFLICT(agent_id, key) DO UPDATE SET content = excluded.content, category = excluded.category,
		embedding = excluded.embedding, updated_at = excluded.updated_at, session_id = excluded.session_id,
		namespace = excluded.namespace, importance = excluded.importance, kind = excluded.kind,
		pinned = excluded.pinned, tenant_id = excluded.tenant_id`

// Store implements Backend: upstream's upsert on (agent_id, key), keeping created_at. Concurrent Stores (the
// auto-saves of turns of several sessions) are group-committed: each returns once the transaction holding its
// row committed.
func (s *SQLite) Store(ctx context.Context, agentID string, r Record) error {
	ts := stamp(r.Now)
	var sid any
	if r.SessionID != "" {
		sid = SanitizeSessionKey(r.SessionID)
	}
	id, ns := newUUID(), orDefault(r.Namespace, "default")
	err := s.group.Do(ctx, len(r.Key)+len(r.Content), func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.StmtContext(ctx, s.upsert).ExecContext(ctx, id, r.Key, r.Content, r.Category, ts, ts, sid, ns, agentID)
		return err
	})
	if err != nil {
		return fmt.Errorf("memory: store %q: %w", r.Key, err)
	}
	return nil
}

// Recall implements Backend with upstream's keyword path (no embedder): FTS5 BM25 over key and content, the
// terms OR-ed, 2×limit candidates, scores divided by the batch's best; when nothing survives, a LIKE search
// scored 1.0. The session filter is strict.
func (s *SQLite) Recall(ctx context.Context, q Query) ([]Entry, error) {
	q = clipQuery(q)
	if q.Limit <= 0 {
		return []Entry{}, nil
	}
	if recentQuery(q.Text) {
		return s.recent(ctx, q)
	}
	if q.ExcludeCategory != "" {
		// The injection's recall, before every turn: on a store of little but auto-saved conversation memories,
		// ranking their FTS5 matches and then the LIKE fallback would both read every one of them to find
		// nothing. Neither path returns a row this check does not see.
		query, args := candidatesSQL(q)
		var found bool
		if err := s.rs.QueryRowContext(ctx, query, args...).Scan(&found); err != nil {
			return nil, fmt.Errorf("memory: recall: %w", err)
		}
		if !found {
			return []Entry{}, nil
		}
	}
	out, err := s.ftsRecall(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("memory: recall: %w", err)
	}
	if len(out) == 0 {
		if out, err = s.likeRecall(ctx, q); err != nil {
			return nil, fmt.Errorf("memory: recall: %w", err)
		}
	}
	return out, nil
}

// FTSQuery renders a recall text as upstream's FTS5 query: each whitespace-separated term quoted (a trailing
// '*' kept as a prefix search), joined with OR.
func FTSQuery(text string) string { return strings.Join(ftsTerms(text), " OR ") }

// ftsTerms is each term of a recall text as an FTS5 phrase, as upstream quotes them.
func ftsTerms(text string) []string {
	var terms []string
	for _, t := range strings.Fields(text) {
		if p, ok := strings.CutSuffix(t, "*"); ok && p != "" {
			terms = append(terms, `"`+strings.ReplaceAll(p, `"`, `""`)+`"*`)
			continue
		}
		terms = append(terms, `"`+strings.ReplaceAll(t, `"`, `""`)+`"`)
	}
	return terms
}

// ftsHit is one ranked FTS5 match: the memory's id and its BM25 score (higher is better).
type ftsHit struct {
	id    string
	score float64
}

// ftsRecall ranks as upstream does: BM25 over the OR of the terms, the best 2×limit candidates. A term matched
// by at least half of the rows has an IDF FTS5 clamps to 1e-6, so it moves no row's rank, but scoring every
// row it matches is what makes a recall with a common word ("what", "about") slow on a large store. Such terms
// are left out of the ranking when a term that weighs remains; if the weighty terms find fewer than 2×limit
// candidates, the rest are the newest rows only zero-weight terms match, with their own (near-zero) scores.
func (s *SQLite) ftsRecall(ctx context.Context, q Query) ([]Entry, error) {
	terms := ftsTerms(q.Text)
	if len(terms) == 0 {
		return nil, nil
	}
	weighty, zero, err := s.splitByWeight(ctx, terms)
	if err != nil {
		return nil, err
	}
	want := 2 * q.Limit
	var hits []ftsHit
	if len(zero) == 0 || len(weighty) == 0 {
		hits, err = s.rank(ctx, strings.Join(terms, " OR "), q, want, true)
	} else {
		hits, err = s.rank(ctx, strings.Join(weighty, " OR "), q, want, true)
		if err == nil && len(hits) < want {
			var more []ftsHit
			more, err = s.rank(ctx, "("+strings.Join(zero, " OR ")+") NOT ("+strings.Join(weighty, " OR ")+")", q, want-len(hits), false)
			slices.SortStableFunc(more, func(a, b ftsHit) int { return cmp.Compare(b.score, a.score) })
			hits = append(hits, more...)
		}
	}
	if err != nil || len(hits) == 0 {
		return nil, err
	}
	best := 0.0
	ids := make([]any, len(hits))
	for i, h := range hits {
		best = math.Max(best, h.score)
		ids[i] = h.id
	}
	byID, err := s.entriesByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, h := range hits {
		e, ok := byID[h.id]
		if !ok || !q.admits(e) {
			continue
		}
		score := 0.0
		if best > 1e-12 {
			score = h.score / best
		}
		e.Score = ptr(score)
		out = append(out, e)
		if len(out) == q.Limit {
			break
		}
	}
	return out, nil
}

// splitByWeight separates the terms that weigh in BM25 from those matched by at least half of the rows (FTS5's
// IDF is log((N - n + 0.5) / (n + 0.5)), clamped to 1e-6 when not positive, that is when 2n >= N). Counting
// stops at half of the rows, so a common term costs a scan of its doclist, not a ranking of its rows.
func (s *SQLite) splitByWeight(ctx context.Context, terms []string) (weighty, zero []string, err error) {
	if len(terms) < 2 {
		return terms, nil, nil
	}
	var rows int
	if err := s.rs.QueryRowContext(ctx, "SELECT count(*) FROM memories").Scan(&rows); err != nil {
		return nil, nil, err
	}
	half := (rows + 1) / 2
	for _, t := range terms {
		var n int
		if err := s.rs.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? LIMIT ?)`,
			t, half).Scan(&n); err != nil {
			return nil, nil, err
		}
		if rows > 0 && 2*n >= rows {
			zero = append(zero, t)
		} else {
			weighty = append(weighty, t)
		}
	}
	return weighty, zero, nil
}

// rank returns up to limit matches of an FTS5 query among q's agents and category, best BM25 first (ranked) or
// newest first.
func (s *SQLite) rank(ctx context.Context, match string, q Query, limit int, ranked bool) ([]ftsHit, error) {
	args := []any{match}
	agentSQL, args := inAgents(q.Agents, args)
	if q.ExcludeCategory != "" {
		agentSQL += " AND m.category != ?"
		args = append(args, q.ExcludeCategory)
	}
	args = append(args, limit)
	order := "score"
	if !ranked {
		order = "f.rowid DESC"
	}
	rows, err := s.rs.QueryContext(ctx, `SELECT m.id, bm25(memories_fts) AS score FROM memories_fts f
		JOIN memories m ON m.rowid = f.rowid WHERE memories_fts MATCH ?`+agentSQL+` ORDER BY `+order+` LIMIT ?`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var hits []ftsHit
	for rows.Next() {
		var h ftsHit
		if err := rows.Scan(&h.id, &h.score); err != nil {
			return nil, err
		}
		h.score = -h.score
		hits = append(hits, h)
	}
	return hits, rows.Err()
}

// admits applies the filters upstream applies after ranking: the time bounds (as text) and the strict session.
func (q Query) admits(e Entry) bool {
	if q.Since != "" && e.Timestamp < q.Since {
		return false
	}
	if q.Until != "" && e.Timestamp > q.Until {
		return false
	}
	if q.SessionID != "" && (e.SessionID == nil || *e.SessionID != SanitizeSessionKey(q.SessionID)) {
		return false
	}
	return true
}

func (s *SQLite) entriesByID(ctx context.Context, ids []any) (map[string]Entry, error) {
	rows, err := s.rs.QueryContext(ctx, `SELECT `+sqliteEntryCols+sqliteFrom+` WHERE m.superseded_by IS NULL AND m.id IN (`+
		strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ")+`)`, ids...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[string]Entry, len(ids))
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, err
		}
		out[e.ID] = e
	}
	return out, rows.Err()
}

// likeTerms is upstream's cap on the terms of the LIKE fallback.
const likeTerms = 8

func likePattern(term string) string {
	if p, ok := strings.CutSuffix(term, "*"); ok && p != "" {
		term = p
	}
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(term) + "%"
}

func (s *SQLite) likeRecall(ctx context.Context, q Query) ([]Entry, error) {
	if len(strings.Fields(q.Text)) == 0 {
		return nil, nil
	}
	query, args := likeSQL(q)
	out, err := s.query(ctx, query, args...)
	for i := range out {
		out[i].Score = ptr(1.0)
	}
	return out, err
}

// likeSQL is the LIKE fallback's query for q (whose text has a term).
func likeSQL(q Query) (string, []any) {
	terms := strings.Fields(q.Text)
	if len(terms) > likeTerms {
		terms = terms[:likeTerms]
	}
	var conds []string
	var args []any
	for _, t := range terms {
		p := likePattern(t)
		conds = append(conds, `m.content LIKE ? ESCAPE '\' OR m.key LIKE ? ESCAPE '\'`)
		args = append(args, p, p)
	}
	where, args := scope(q, "("+strings.Join(conds, " OR ")+")", args)
	args = append(args, q.Limit)
	return `SELECT ` + sqliteEntryCols + sqliteFrom + ` WHERE ` + where + ` ORDER BY m.updated_at DESC LIMIT ?`, args
}

// candidatesSQL asks whether any memory q may return exists at all: not superseded, one of q's agents', outside
// q's excluded category (which it must name). Like the fallback, it reads only idx_memories_category's entries
// on either side of the excluded category.
func candidatesSQL(q Query) (string, []any) {
	one := func(op string, args []any) (string, []any) {
		args = append(args, q.ExcludeCategory)
		agentSQL, args := inAgents(q.Agents, args)
		return `SELECT 1 FROM memories m WHERE m.category ` + op + ` ? AND m.superseded_by IS NULL` +
			strings.Replace(agentSQL, "m.agent_id", "+m.agent_id", 1) + ` LIMIT 1`, args
	}
	below, args := one("<", nil)
	above, args := one(">", args)
	return `SELECT EXISTS (` + below + `) OR EXISTS (` + above + `)`, args
}

// scope adds the superseded, agent, session and time filters of q to a WHERE clause. An excluded category is
// written as the ranges on either side of it, with the agent filter kept off its index, so SQLite reads
// idx_memories_category around the excluded rows instead of every row of the agents (the injection's recall
// excludes conversation memories, which may be nearly all of them).
func scope(q Query, where string, args []any) (string, []any) {
	where += " AND m.superseded_by IS NULL"
	agentSQL, args := inAgents(q.Agents, args)
	if q.ExcludeCategory != "" {
		where += strings.Replace(agentSQL, "m.agent_id", "+m.agent_id", 1)
		where += " AND (m.category < ? OR m.category > ?)"
		args = append(args, q.ExcludeCategory, q.ExcludeCategory)
	} else {
		where += agentSQL
	}
	if q.SessionID != "" {
		where += " AND m.session_id = ?"
		args = append(args, SanitizeSessionKey(q.SessionID))
	}
	if q.Since != "" {
		where += " AND m.created_at >= ?"
		args = append(args, q.Since)
	}
	if q.Until != "" {
		where += " AND m.created_at <= ?"
		args = append(args, q.Until)
	}
	return where, args
}

func (s *SQLite) recent(ctx context.Context, q Query) ([]Entry, error) {
	where, args := scope(q, "1", nil)
	args = append(args, q.Limit)
	return s.query(ctx, `SELECT `+sqliteEntryCols+sqliteFrom+` WHERE `+where+` ORDER BY m.updated_at DESC LIMIT ?`, args...)
}

func (s *SQLite) query(ctx context.Context, query string, args ...any) ([]Entry, error) {
	rows, err := s.rs.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("memory: query: %w", err)
	}
	defer rows.Close()
	out := []Entry{}
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, fmt.Errorf("memory: query: %w", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// Get implements Backend.
func (s *SQLite) Get(ctx context.Context, key string, agents []string) (*Entry, error) {
	if agents == nil {
		out, err := s.query(ctx, `SELECT `+sqliteEntryCols+sqliteFrom+` WHERE m.key = ? LIMIT 1`, key)
		if err != nil || len(out) == 0 {
			return nil, err
		}
		return &out[0], nil
	}
	for _, a := range agents {
		out, err := s.query(ctx, `SELECT `+sqliteEntryCols+sqliteFrom+` WHERE m.key = ? AND m.agent_id = ?`, key, a)
		if err != nil {
			return nil, err
		}
		if len(out) > 0 {
			return &out[0], nil
		}
	}
	return nil, nil
}

// List implements Backend.
func (s *SQLite) List(ctx context.Context, f Filter) ([]Entry, error) {
	where, args := "m.superseded_by IS NULL", []any(nil)
	if f.Category != "" {
		where += " AND m.category = ?"
		args = append(args, f.Category)
	}
	if f.Namespace != "" {
		where += " AND m.namespace = ?"
		args = append(args, f.Namespace)
	}
	where, args = scope(Query{Agents: f.Agents, SessionID: f.SessionID, Since: f.Since, Until: f.Until}, where, args)
	args = append(args, ListCap)
	return s.query(ctx, `SELECT `+sqliteEntryCols+sqliteFrom+` WHERE `+where+` ORDER BY m.updated_at DESC LIMIT ?`, args...)
}

// Forget implements Backend; an empty agentID forgets the key of every agent (upstream's unscoped forget).
func (s *SQLite) Forget(ctx context.Context, agentID, key string) (bool, error) {
	if agentID == "" {
		n, err := s.exec(ctx, "DELETE FROM memories WHERE key = ?", key)
		return n > 0, err
	}
	n, err := s.exec(ctx, "DELETE FROM memories WHERE key = ? AND agent_id = ?", key, agentID)
	return n > 0, err
}

// PurgeSession implements Backend.
func (s *SQLite) PurgeSession(ctx context.Context, agentID, sessionID string) (int, error) {
	return s.exec(ctx, "DELETE FROM memories WHERE agent_id = ? AND session_id = ?", agentID, SanitizeSessionKey(sessionID))
}

// PurgeNamespace implements Backend.
func (s *SQLite) PurgeNamespace(ctx context.Context, agentID, namespace string) (int, error) {
	return s.exec(ctx, "DELETE FROM memories WHERE agent_id = ? AND namespace = ?", agentID, namespace)
}

// DeleteBefore implements Backend. Times carry their writer's offset, so they are compared as instants.
func (s *SQLite) DeleteBefore(ctx context.Context, category string, t time.Time) (int, error) {
	return s.exec(ctx, "DELETE FROM memories WHERE category = ? AND julianday(created_at) < julianday(?)",
		category, t.UTC().Format(time.RFC3339Nano))
}

// PruneAutoSaved implements Backend. Auto-saved rows are inserted once (their key is the turn's), so rowid
// order is their age; the agent's rows are read off idx_memories_agent_id, newest first.
func (s *SQLite) PruneAutoSaved(ctx context.Context, agentID string, keep, batch int) (int, error) {
	return s.exec(ctx, `DELETE FROM memories WHERE rowid IN (SELECT rowid FROM (SELECT rowid FROM memories
		WHERE agent_id = ? AND category = ? AND key LIKE 'user\_msg\_%' ESCAPE '\' ORDER BY rowid DESC LIMIT -1 OFFSET ?)
		ORDER BY rowid ASC LIMIT ?)`, agentID, CategoryConversation, max(keep, 0), max(batch, 1))
}

func (s *SQLite) exec(ctx context.Context, q string, args ...any) (int, error) {
	res, err := s.w.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("memory: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
