package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// Session keys (upstream's convention, protocol.md §0): a session created over RPC is stored under
// rpc_<session_id>, one created by the gateway under gw_<session_id>, a channel's under its own key
// (telegram_123_456). Sessions of our releases before this rule are stored under their bare id.
const (
	RPCKeyPrefix     = "rpc_"
	GatewayKeyPrefix = "gw_"
)

// RPCKey is the key under which a new RPC session with this id is stored.
func RPCKey(id string) string { return RPCKeyPrefix + id }

// SessionID is the id clients use for the session stored under key: the key without its rpc_ prefix, or else
// without its gw_ prefix (only one is removed, as upstream's session/list does).
func SessionID(key string) string {
	if id, ok := strings.CutPrefix(key, RPCKeyPrefix); ok {
		return id
	}
	if id, ok := strings.CutPrefix(key, GatewayKeyPrefix); ok {
		return id
	}
	return key
}

// Resolve returns the metadata of the session a client's id names: the first of the rows keyed <id>,
// rpc_<id> and gw_<id> that exists (upstream's lookup order; the bare key first keeps channel sessions and our
// earlier releases' sessions reachable). SessionMeta.Key is the key found. No row gives an error wrapping
// ErrNotFound.
func (s *ChatStore) Resolve(ctx context.Context, id string) (SessionMeta, error) {
	if err := s.check("resolve", id, false); err != nil {
		return SessionMeta{}, err
	}
	if id == "" {
		return SessionMeta{}, fmt.Errorf("store: resolve %q: %w", id, ErrNotFound)
	}
	rpc, gw := RPCKey(id), GatewayKeyPrefix+id
	if err := s.imports.await(ctx, "resolve", id, rpc, gw); err != nil {
		return SessionMeta{}, err
	}
	m, err := scanMeta(s.d.r.QueryRowContext(ctx, "SELECT "+metaCols+` FROM session_metadata
		WHERE session_key IN (?, ?, ?)
		ORDER BY CASE session_key WHEN ? THEN 0 WHEN ? THEN 1 ELSE 2 END LIMIT 1`, id, rpc, gw, id, rpc))
	if errors.Is(err, sql.ErrNoRows) {
		return SessionMeta{}, fmt.Errorf("store: resolve %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return SessionMeta{}, fmt.Errorf("store: resolve %s: %w", id, err)
	}
	return m, nil
}
