package memory

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/pgdb"
)

// PostgresOptions names a PostgreSQL memory table: [storage.postgres.<alias>] db_url, schema and table.
type PostgresOptions struct {
	URL, Schema, Table string
	Now                func() time.Time
}

// Postgres is the memory backend of installs that share memories across hosts: upstream's table
// (<schema>.<table>, default public.memories) and <schema>.agents, rows scoped by agent_id, keyword recall with
// PostgreSQL's own text search (the 'simple' configuration upstream indexes with).
type Postgres struct {
	pool          *pgdb.Pool
	table         string // quoted, schema-qualified
	agents        string
	schema, index string // the content text-search index, whose statistics name the common words
	now           func() time.Time

	mu       sync.Mutex // guards the fields below
	common   map[string]bool
	commonAt time.Time
}

var pgIdent = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// OpenPostgres connects to the server db_url names and creates (or brings up to date) upstream's memory table and
// agents table. Errors never quote db_url: it may carry a password.
func OpenPostgres(ctx context.Context, o PostgresOptions) (*Postgres, error) {
	schema, table := orDefault(o.Schema, "public"), orDefault(o.Table, "memories")
	for _, id := range []struct{ what, v string }{{"schema", schema}, {"table", table}} {
		if !pgIdent().MatchString(id.v) {
			return nil, fmt.Errorf("%w: postgres %s %q: use ASCII letters, digits and underscores, not starting with a digit", ErrInvalid, id.what, id.v)
		}
	}
	cfg, err := pgdb.ParseURL(o.URL)
	if err != nil {
		// pgdb's message never quotes the URL (it may carry a password); keep memory's error class.
		return nil, fmt.Errorf("%w: %s", ErrInvalid, strings.TrimPrefix(err.Error(), pgdb.ErrInvalid.Error()+": "))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	pool := pgdb.New(cfg, pgdb.Options{})
	p := &Postgres{pool: pool, table: pgQuote(schema) + "." + pgQuote(table), agents: pgQuote(schema) + ".agents",
		schema: schema, index: "idx_" + table + "_content_fts", now: o.Now}
	if err := p.init(ctx, schema, table); err != nil {
		pool.Close()
		return nil, fmt.Errorf("memory: postgres %s.%s: %w", schema, table, err)
	}
	return p, nil
}

func pgQuote(id string) string { return `"` + id + `"` }

// Kind implements Backend.
func (p *Postgres) Kind() string { return KindPostgres }

// Close implements Backend.
func (p *Postgres) Close() error {
	p.pool.Close()
	return nil
}

// init creates upstream's schema objects under an advisory lock (two daemons may open one database at once):
// the table as upstream's init_schema creates it, its indexes (upstream's names when the table is "memories"),
// the agent scoping upstream's V3 migration adds (agents table, agent_id NOT NULL referencing it, unique
// (agent_id, key) instead of unique key; rows from before it belong to the default agent), the namespace and
// importance columns of upstream's pgvector path, and session ids in their sanitized form.
func (p *Postgres) init(ctx context.Context, schema, table string) error {
	tx, err := p.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", "zeroclaw-memory:"+schema+"."+table); err != nil {
		return err
	}
	ix := "idx_" + table + "_"
	t := p.table
	if err := tx.Script(ctx, `
CREATE SCHEMA IF NOT EXISTS `+pgQuote(schema)+`;
CREATE TABLE IF NOT EXISTS `+p.agents+` (
    id         TEXT PRIMARY KEY,
    alias      TEXT NOT NULL UNIQUE,
    created_at TIMESTAMPTZ NOT NULL DEFAULT NOW()
);
CREATE TABLE IF NOT EXISTS `+t+` (
    id         TEXT PRIMARY KEY,
    key        TEXT NOT NULL,
    content    TEXT NOT NULL,
    category   TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    session_id TEXT
);
CREATE INDEX IF NOT EXISTS `+ix+`category ON `+t+`(category);
CREATE INDEX IF NOT EXISTS `+ix+`session_id ON `+t+`(session_id);
CREATE INDEX IF NOT EXISTS `+ix+`updated_at ON `+t+`(updated_at DESC);
CREATE INDEX IF NOT EXISTS `+ix+`content_fts ON `+t+` USING gin(to_tsvector('simple', content));
CREATE INDEX IF NOT EXISTS `+ix+`key_fts ON `+t+` USING gin(to_tsvector('simple', key));
ALTER TABLE `+t+` ADD COLUMN IF NOT EXISTS namespace TEXT DEFAULT 'default';
ALTER TABLE `+t+` ADD COLUMN IF NOT EXISTS importance REAL;
ALTER TABLE `+t+` ADD COLUMN IF NOT EXISTS agent_id TEXT;
CREATE INDEX IF NOT EXISTS `+ix+`namespace ON `+t+`(namespace);
CREATE INDEX IF NOT EXISTS `+ix+`agent_id ON `+t+`(agent_id);`); err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	rows, err := tx.Query(ctx, "SELECT EXISTS (SELECT 1 FROM "+t+" WHERE agent_id IS NULL)")
	if err != nil {
		return err
	}
	if len(rows) == 1 && string(rows[0][0]) == "t" {
		def, err := pgEnsureAgent(ctx, tx, p.agents, "default")
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "UPDATE "+t+" SET agent_id = $1 WHERE agent_id IS NULL", def); err != nil {
			return err
		}
	}
	if _, err := tx.Exec(ctx, "ALTER TABLE "+t+" ALTER COLUMN agent_id SET NOT NULL"); err != nil {
		return err
	}
	// Constraints by what they cover, not by name: names are per schema and an older table may have its own.
	rows, err = tx.Query(ctx, `SELECT c.conname::text, c.contype::text,
		   ARRAY(SELECT a.attname::text FROM unnest(c.conkey) k JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k ORDER BY a.attname)
		FROM pg_constraint c WHERE c.conrelid = $1::regclass AND c.contype IN ('u', 'f')`, t)
	if err != nil {
		return err
	}
	var dropKeyUnique []string
	var haveScoped, haveFK bool
	for _, r := range rows {
		name, typ := string(r[0]), string(r[1])
		cols, err := pgdb.ParseArray(r[2])
		if err != nil {
			return err
		}
		switch {
		case typ == "u" && strings.Join(cols, ",") == "key":
			dropKeyUnique = append(dropKeyUnique, name)
		case typ == "u" && strings.Join(cols, ",") == "agent_id,key":
			haveScoped = true
		case typ == "f" && strings.Join(cols, ",") == "agent_id":
			haveFK = true
		}
	}
	for _, name := range dropKeyUnique {
		if _, err := tx.Exec(ctx, "ALTER TABLE "+t+" DROP CONSTRAINT "+pgQuote(strings.ReplaceAll(name, `"`, `""`))); err != nil {
			return err
		}
	}
	if !haveScoped {
		if _, err := tx.Exec(ctx, "ALTER TABLE "+t+" ADD CONSTRAINT "+pgQuote(table+"_agent_id_key_key")+" UNIQUE (agent_id, key)"); err != nil {
			return err
		}
	}
	if !haveFK {
		if _, err := tx.Exec(ctx, "ALTER TABLE "+t+" ADD CONSTRAINT "+pgQuote(table+"_agent_id_fkey")+" FOREIGN KEY (agent_id) REFERENCES "+p.agents+"(id)"); err != nil {
			return err
		}
	}
	if err := pgNormalizeSessionIDs(ctx, tx, t); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

func pgNormalizeSessionIDs(ctx context.Context, tx pgdb.Runner, t string) error {
	rows, err := tx.Query(ctx, "SELECT DISTINCT session_id FROM "+t+" WHERE session_id IS NOT NULL")
	if err != nil {
		return err
	}
	for _, r := range rows {
		if id, clean := string(r[0]), SanitizeSessionKey(string(r[0])); clean != id {
			if _, err := tx.Exec(ctx, "UPDATE "+t+" SET session_id = $1 WHERE session_id = $2", clean, id); err != nil {
				return err
			}
		}
	}
	return nil
}

func pgEnsureAgent(ctx context.Context, db pgdb.Runner, agents, alias string) (string, error) {
	if _, err := db.Exec(ctx, "INSERT INTO "+agents+" (id, alias, created_at) VALUES ($1, $2, NOW()) ON CONFLICT (alias) DO NOTHING",
		newUUID(), alias); err != nil {
		return "", err
	}
	rows, err := db.Query(ctx, "SELECT id FROM "+agents+" WHERE alias = $1", alias)
	if err != nil {
		return "", err
	}
	if len(rows) != 1 || rows[0][0] == nil {
		return "", fmt.Errorf("agent %q: %d rows after the insert", alias, len(rows))
	}
	return string(rows[0][0]), nil
}

// EnsureAgent implements Backend.
func (p *Postgres) EnsureAgent(ctx context.Context, alias string) (string, error) {
	id, err := pgEnsureAgent(ctx, p.pool, p.agents, alias)
	if err != nil {
		return "", fmt.Errorf("memory: agent %q: %w", alias, err)
	}
	return id, nil
}

// Store implements Backend: upstream's upsert on (agent_id, key), keeping created_at.
func (p *Postgres) Store(ctx context.Context, agentID string, r Record) error {
	var sid *string
	if r.SessionID != "" {
		sid = ptr(SanitizeSessionKey(r.SessionID))
	}
	_, err := p.pool.Exec(ctx, `INSERT INTO `+p.table+` (id, key, content, category, created_at, updated_at, session_id, namespace, agent_id)
		VALUES ($1, $2, $3, $4, $5, $5, $6, $7, $8)
		ON CONFLICT (agent_id, key) DO UPDATE SET content = EXCLUDED.content, category = EXCLUDED.category,
			updated_at = EXCLUDED.updated_at, session_id = EXCLUDED.session_id, namespace = EXCLUDED.namespace`,
		newUUID(), r.Key, r.Content, r.Category, r.Now, sid, orDefault(r.Namespace, "default"), agentID)
	if err != nil {
		return fmt.Errorf("memory: store %q: %w", r.Key, err)
	}
	return nil
}

const pgEntryCols = `m.id, m.key, m.content, m.category, m.created_at, m.session_id, m.namespace, m.importance, a.alias, m.agent_id`

func (p *Postgres) from() string {
	return ` FROM ` + p.table + ` m LEFT JOIN ` + p.agents + ` a ON a.id = m.agent_id`
}

// pgStamp formats a stored time as upstream's PostgreSQL backend does (chrono's to_rfc3339 of a UTC time).
func pgStamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.999999999-07:00") }

// pgScan reads rows of pgEntryCols, and a score column after them when withScore.
func pgScan(rows []pgdb.Row, withScore bool) ([]Entry, []float64, error) {
	out := []Entry{}
	var scores []float64
	nullable := func(v []byte) *string {
		if v == nil {
			return nil
		}
		return ptr(string(v))
	}
	for _, r := range rows {
		if len(r) < 10 || withScore && len(r) < 11 {
			return nil, nil, fmt.Errorf("memory: query: %d columns", len(r))
		}
		e := Entry{ID: string(r[0]), Key: string(r[1]), Content: string(r[2]), Category: string(r[3]),
			SessionID: nullable(r[5]), AgentAlias: nullable(r[8]), AgentID: nullable(r[9])}
		created, err := pgdb.ParseTime(r[4])
		if err != nil {
			return nil, nil, fmt.Errorf("memory: query: %w", err)
		}
		e.Timestamp = pgStamp(created)
		e.Namespace = "default"
		if r[6] != nil {
			e.Namespace = orDefault(string(r[6]), "default")
		}
		if r[7] != nil {
			imp, err := strconv.ParseFloat(string(r[7]), 32)
			if err != nil {
				return nil, nil, fmt.Errorf("memory: query: importance %q: %w", r[7], err)
			}
			e.Importance = ptr(float64(float32(imp)))
		}
		var score float64
		if withScore {
			if score, err = strconv.ParseFloat(string(r[10]), 64); err != nil {
				return nil, nil, fmt.Errorf("memory: query: score %q: %w", r[10], err)
			}
		}
		out = append(out, e)
		scores = append(scores, score)
	}
	return out, scores, nil
}

// pgArgs collects positional parameters.
type pgArgs []any

func (a *pgArgs) add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// scope renders the agent, category, session and time filters of q.
func (p *Postgres) scope(q Query, args *pgArgs) string {
	var w strings.Builder
	switch {
	case q.Agents == nil:
	case len(q.Agents) == 0:
		w.WriteString(" AND FALSE")
	default:
		w.WriteString(" AND m.agent_id = ANY(" + args.add(q.Agents) + ")")
	}
	if q.ExcludeCategory != "" {
		w.WriteString(" AND m.category <> " + args.add(q.ExcludeCategory))
	}
	if q.SessionID != "" {
		w.WriteString(" AND m.session_id = " + args.add(SanitizeSessionKey(q.SessionID)))
	}
	if q.Since != "" {
		w.WriteString(" AND m.created_at >= " + args.add(q.Since) + "::timestamptz")
	}
	if q.Until != "" {
		w.WriteString(" AND m.created_at <= " + args.add(q.Until) + "::timestamptz")
	}
	return w.String()
}

// Recall implements Backend: the recall text's terms OR-ed into one tsquery ('simple' configuration, a trailing
// '*' a prefix search), matched against key and content through upstream's two GIN indexes, ranked with upstream's
// formula (ts_rank_cd of the key doubled plus that of the content), scores divided by the batch's best as the
// SQLite backend does. When nothing matches, a LIKE search scored 1.0. Every filter, the session one strict, is
// part of the query.
func (p *Postgres) Recall(ctx context.Context, q Query) ([]Entry, error) {
	q = clipQuery(q)
	if q.Limit <= 0 {
		return []Entry{}, nil
	}
	if err := pgCheckTimes(q.Since, q.Until); err != nil {
		return nil, err
	}
	if recentQuery(q.Text) {
		var args pgArgs
		where := p.scope(q, &args)
		lim := args.add(q.Limit)
		rows, err := p.pool.Query(ctx, `SELECT `+pgEntryCols+p.from()+` WHERE TRUE`+where+` ORDER BY m.updated_at DESC LIMIT `+lim, args...)
		if err != nil {
			return nil, fmt.Errorf("memory: recall: %w", err)
		}
		out, _, err := pgScan(rows, false)
		return out, err
	}
	out, err := p.ftsRecall(ctx, q)
	if err == nil && len(out) == 0 {
		out, err = p.likeRecall(ctx, q)
	}
	if err != nil {
		return nil, fmt.Errorf("memory: recall: %w", err)
	}
	return out, nil
}

// pgCheckTimes rejects bounds PostgreSQL could not read as times (the tools check them first; this keeps a
// bad one a specific error rather than a server error).
func pgCheckTimes(times ...string) error {
	for _, s := range times {
		if s == "" {
			continue
		}
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			return fmt.Errorf("%w: %q is not an RFC 3339 time", ErrInvalid, s)
		}
	}
	return nil
}

// tsQuery renders the OR of the recall text's terms as a tsquery expression.
func tsQuery(text string, args *pgArgs) string {
	var parts []string
	for _, t := range strings.Fields(text) {
		if pre, ok := strings.CutSuffix(t, "*"); ok && pre != "" {
			// Each word of the prefix term, as a prefix lexeme; an empty tsquery when it has none.
			parts = append(parts, `COALESCE((SELECT to_tsquery('simple', string_agg(quote_literal(l) || ':*', ' & '))
				FROM unnest(tsvector_to_array(to_tsvector('simple', `+args.add(pre)+`))) AS l), ''::tsquery)`)
			continue
		}
		parts = append(parts, "plainto_tsquery('simple', "+args.add(t)+")")
	}
	if len(parts) == 0 {
		return ""
	}
	return "(" + strings.Join(parts, " || ") + ")"
}

// commonRefresh is how long the common words read from the server's statistics are kept.
const commonRefresh = time.Minute

// commonWords returns the lexemes PostgreSQL's statistics of the content index (ANALYZE, autovacuum) say half of
// the memories or more contain; none before the table was first analyzed.
func (p *Postgres) commonWords(ctx context.Context) (map[string]bool, error) {
	p.mu.Lock()
	if p.common != nil && time.Since(p.commonAt) < commonRefresh {
		defer p.mu.Unlock()
		return p.common, nil
	}
	p.mu.Unlock()
	rows, err := p.pool.Query(ctx, `SELECT e.elem FROM pg_stats s,
		unnest(s.most_common_elems::text::text[]) WITH ORDINALITY AS e(elem, i),
		unnest(s.most_common_elem_freqs) WITH ORDINALITY AS f(freq, j)
		WHERE s.schemaname = $1 AND s.tablename = $2 AND e.i = f.j AND f.freq >= 0.5`, p.schema, p.index)
	if err != nil {
		return nil, err
	}
	common := make(map[string]bool, len(rows))
	for _, r := range rows {
		common[string(r[0])] = true
	}
	p.mu.Lock()
	p.common, p.commonAt = common, time.Now()
	p.mu.Unlock()
	return common, nil
}

// splitCommon separates the recall terms whose every word half of the memories contain (by the server's
// statistics) from the others. Prefix terms always select.
func (p *Postgres) splitCommon(ctx context.Context, terms []string) (selective, common []string, err error) {
	words, err := p.commonWords(ctx)
	if err != nil || len(words) == 0 || len(terms) < 2 {
		return terms, nil, err
	}
	rows, err := p.pool.Query(ctx, `SELECT tsvector_to_array(to_tsvector('simple', t)) FROM unnest($1::text[]) WITH ORDINALITY AS u(t, i) ORDER BY i`, terms)
	if err != nil {
		return nil, nil, err
	}
	if len(rows) != len(terms) {
		return nil, nil, fmt.Errorf("lexemes of %d terms: %d rows", len(terms), len(rows))
	}
	lexemes := make([][]string, len(rows))
	for i, r := range rows {
		if lexemes[i], err = pgdb.ParseArray(r[0]); err != nil {
			return nil, nil, err
		}
	}
	for i, t := range terms {
		all := len(lexemes[i]) > 0 && !strings.HasSuffix(t, "*")
		for _, l := range lexemes[i] {
			all = all && words[l]
		}
		if all {
			common = append(common, t)
		} else {
			selective = append(selective, t)
		}
	}
	return selective, common, nil
}

// ftsRecall ranks every matching row with upstream's formula over all the terms. A word half of the memories
// contain (PostgreSQL's statistics say which) does not select rows when another term does: ranking every row
// it matches is what makes a recall with "what" or "about" slow on a large store. Rows only such words match
// fill the places the selective terms leave, newest first.
func (p *Postgres) ftsRecall(ctx context.Context, q Query) ([]Entry, error) {
	terms := strings.Fields(q.Text)
	selective, common, err := p.splitCommon(ctx, terms)
	if err != nil {
		return nil, err
	}
	var args pgArgs
	tsq := tsQuery(q.Text, &args)
	if tsq == "" {
		return nil, nil
	}
	match := tsq
	if len(common) > 0 && len(selective) > 0 {
		match = tsQuery(strings.Join(selective, " "), &args)
	}
	matches := func(tq string) string {
		return `(to_tsvector('simple', m.key) @@ ` + tq + ` OR to_tsvector('simple', m.content) @@ ` + tq + `)`
	}
	score := `ts_rank_cd(to_tsvector('simple', m.key), ` + tsq + `) * 2.0 + ts_rank_cd(to_tsvector('simple', m.content), ` + tsq + `) AS score`
	where := p.scope(q, &args)
	lim := args.add(q.Limit)
	rows, err := p.pool.Query(ctx, `SELECT `+pgEntryCols+`, `+score+p.from()+` WHERE `+matches(match)+where+`
		ORDER BY score DESC, m.updated_at DESC LIMIT `+lim, args...)
	if err != nil {
		return nil, err
	}
	out, scores, err := pgScan(rows, true)
	if err != nil {
		return nil, err
	}
	if match != tsq && len(out) < q.Limit {
		var fill pgArgs
		tsq := tsQuery(q.Text, &fill)
		commonQ := tsQuery(strings.Join(common, " "), &fill)
		selQ := tsQuery(strings.Join(selective, " "), &fill)
		score := `ts_rank_cd(to_tsvector('simple', m.key), ` + tsq + `) * 2.0 + ts_rank_cd(to_tsvector('simple', m.content), ` + tsq + `) AS score`
		where := p.scope(q, &fill)
		lim := fill.add(q.Limit - len(out))
		rows, err := p.pool.Query(ctx, `SELECT `+pgEntryCols+`, `+score+p.from()+` WHERE `+matches(commonQ)+` AND NOT `+matches(selQ)+where+`
			ORDER BY m.updated_at DESC LIMIT `+lim, fill...)
		if err != nil {
			return nil, err
		}
		more, moreScores, err := pgScan(rows, true)
		if err != nil {
			return nil, err
		}
		out, scores = append(out, more...), append(scores, moreScores...)
	}
	best := 0.0
	for _, s := range scores {
		best = math.Max(best, s)
	}
	for i := range out {
		s := 0.0
		if best > 1e-12 {
			s = scores[i] / best
		}
		out[i].Score = ptr(s)
	}
	return out, nil
}

func (p *Postgres) likeRecall(ctx context.Context, q Query) ([]Entry, error) {
	terms := strings.Fields(q.Text)
	if len(terms) > likeTerms {
		terms = terms[:likeTerms]
	}
	if len(terms) == 0 {
		return nil, nil
	}
	var args pgArgs
	var conds []string
	for _, t := range terms {
		n := args.add(likePattern(t))
		conds = append(conds, `m.content LIKE `+n+` ESCAPE '\' OR m.key LIKE `+n+` ESCAPE '\'`)
	}
	where := p.scope(q, &args)
	lim := args.add(q.Limit)
	rows, err := p.pool.Query(ctx, `SELECT `+pgEntryCols+p.from()+` WHERE (`+strings.Join(conds, " OR ")+`)`+where+
		` ORDER BY m.updated_at DESC LIMIT `+lim, args...)
	if err != nil {
		return nil, err
	}
	out, _, err := pgScan(rows, false)
	for i := range out {
		out[i].Score = ptr(1.0)
	}
	return out, err
}

func (p *Postgres) query(ctx context.Context, sql string, args ...any) ([]Entry, error) {
	rows, err := p.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("memory: query: %w", err)
	}
	out, _, err := pgScan(rows, false)
	return out, err
}

// Get implements Backend.
func (p *Postgres) Get(ctx context.Context, key string, agents []string) (*Entry, error) {
	if agents == nil {
		out, err := p.query(ctx, `SELECT `+pgEntryCols+p.from()+` WHERE m.key = $1 LIMIT 1`, key)
		if err != nil || len(out) == 0 {
			return nil, err
		}
		return &out[0], nil
	}
	for _, a := range agents {
		out, err := p.query(ctx, `SELECT `+pgEntryCols+p.from()+` WHERE m.key = $1 AND m.agent_id = $2`, key, a)
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
func (p *Postgres) List(ctx context.Context, f Filter) ([]Entry, error) {
	if err := pgCheckTimes(f.Since, f.Until); err != nil {
		return nil, err
	}
	var args pgArgs
	where := ""
	if f.Category != "" {
		where += " AND m.category = " + args.add(f.Category)
	}
	if f.Namespace != "" {
		where += " AND m.namespace = " + args.add(f.Namespace)
	}
	where += p.scope(Query{Agents: f.Agents, SessionID: f.SessionID, Since: f.Since, Until: f.Until}, &args)
	lim := args.add(ListCap)
	return p.query(ctx, `SELECT `+pgEntryCols+p.from()+` WHERE TRUE`+where+` ORDER BY m.updated_at DESC LIMIT `+lim, args...)
}

func (p *Postgres) exec(ctx context.Context, sql string, args ...any) (int, error) {
	n, err := p.pool.Exec(ctx, sql, args...)
	if err != nil {
		return 0, fmt.Errorf("memory: %w", err)
	}
	return int(n), nil
}

// Forget implements Backend; an empty agentID forgets the key of every agent (upstream's unscoped forget).
func (p *Postgres) Forget(ctx context.Context, agentID, key string) (bool, error) {
	if agentID == "" {
		n, err := p.exec(ctx, "DELETE FROM "+p.table+" WHERE key = $1", key)
		return n > 0, err
	}
	n, err := p.exec(ctx, "DELETE FROM "+p.table+" WHERE key = $1 AND agent_id = $2", key, agentID)
	return n > 0, err
}

// PurgeSession implements Backend.
func (p *Postgres) PurgeSession(ctx context.Context, agentID, sessionID string) (int, error) {
	return p.exec(ctx, "DELETE FROM "+p.table+" WHERE agent_id = $1 AND session_id = $2", agentID, SanitizeSessionKey(sessionID))
}

// PurgeNamespace implements Backend.
func (p *Postgres) PurgeNamespace(ctx context.Context, agentID, namespace string) (int, error) {
	return p.exec(ctx, "DELETE FROM "+p.table+" WHERE agent_id = $1 AND COALESCE(namespace, 'default') = $2", agentID, namespace)
}

// DeleteBefore implements Backend.
func (p *Postgres) DeleteBefore(ctx context.Context, category string, t time.Time) (int, error) {
	return p.exec(ctx, "DELETE FROM "+p.table+" WHERE category = $1 AND created_at < $2", category, t)
}

// PruneAutoSaved implements Backend, oldest by created_at (then id).
func (p *Postgres) PruneAutoSaved(ctx context.Context, agentID string, keep, batch int) (int, error) {
	return p.exec(ctx, `DELETE FROM `+p.table+` WHERE id IN (SELECT id FROM (SELECT id, created_at FROM `+p.table+`
		WHERE agent_id = $1 AND category = $2 AND key LIKE 'user\_msg\_%' ORDER BY created_at DESC, id DESC OFFSET $3) old
		ORDER BY created_at ASC, id ASC LIMIT $4)`, agentID, CategoryConversation, max(keep, 0), max(batch, 1))
}

var _ Backend = (*Postgres)(nil)
