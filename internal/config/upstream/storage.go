package upstream

import "strings"

// foldStorage is the v2 → v3 storage step: [memory.qdrant], [memory.postgres], memory.sqlite_open_timeout_secs
// and [storage.provider.config] move to [storage.<backend>.default].
func (m *migration) foldStorage(in tree) {
	var qdrant, postgres, sqliteTimeout, provider any
	var hasQ, hasP, hasT, hasProv bool
	if mem, ok := asTree(in["memory"]); ok {
		qdrant, hasQ = take(mem, "qdrant")
		postgres, hasP = take(mem, "postgres")
		sqliteTimeout, hasT = take(mem, "sqlite_open_timeout_secs")
	}
	if st, ok := asTree(in["storage"]); ok {
		provider, hasProv = take(st, "provider")
	}
	if !hasQ && !hasP && !hasT && !hasProv {
		return
	}
	storage := subtree(in, "storage")
	if storage == nil {
		return
	}
	mergeDefault := func(backend string, fields tree) {
		if b := subtree(storage, backend); b != nil {
			if d := subtree(b, "default"); d != nil {
				for k, v := range fields {
					orInsert(d, k, v)
				}
			}
		}
	}
	if q, ok := asTree(qdrant); ok {
		mergeDefault("qdrant", q)
		m.note("[memory.qdrant] moved to [storage.qdrant.default]")
	}
	if hasT {
		mergeDefault("sqlite", tree{"open_timeout_secs": sqliteTimeout})
		m.note("memory.sqlite_open_timeout_secs moved to storage.sqlite.default.open_timeout_secs")
	}
	if p, ok := asTree(postgres); ok {
		mergeDefault("postgres", p)
		m.note("[memory.postgres] moved to [storage.postgres.default]")
	}
	if pt, ok := asTree(provider); ok {
		cfg := pt
		if inner, ok := asTree(pt["config"]); ok {
			delete(pt, "config")
			cfg = inner
		}
		if len(cfg) > 0 {
			typ, fields := adaptStorageProvider(cfg)
			if len(fields) > 0 {
				mergeDefault(typ, fields)
				m.note("[storage.provider.config] moved to [storage.%s.default]", typ)
			}
		}
	}
	for _, k := range []string{"memory", "storage"} {
		if t, ok := asTree(in[k]); ok && len(t) == 0 {
			delete(in, k)
		}
	}
}

func adaptStorageProvider(cfg tree) (string, tree) {
	typ := "sqlite"
	if v, ok := take(cfg, "provider"); ok {
		if s, ok := v.(string); ok && s != "" {
			typ = s
		}
	}
	switch typ {
	case "sqlite":
		out := tree{}
		if v, ok := take(cfg, "db_url"); ok {
			if s, ok := v.(string); ok {
				path := s
				if p, ok := strings.CutPrefix(s, "sqlite://"); ok {
					path = p
				} else if p, ok := strings.CutPrefix(s, "sqlite:"); ok {
					path = p
				}
				if path != "" {
					out["path"] = path
				}
			}
		}
		if v, ok := take(cfg, "connect_timeout_secs"); ok {
			out["open_timeout_secs"] = v
		}
		return typ, out
	case "qdrant":
		out := tree{}
		if v, ok := take(cfg, "db_url"); ok {
			out["url"] = v
		}
		return typ, out
	}
	return typ, cfg
}
