package store

import (
	"context"
	"time"
)

// Chat is what the daemon asks of a chat-session backend (state.md §4): the SQLite database (ChatStore, the
// default) or one JSONL file per session (jsonl.Chat, `[channels] session_backend = "jsonl"`).
type Chat interface {
	EnsureSession(ctx context.Context, key, agentAlias, owner string, now time.Time) (SessionMeta, bool, error)
	Append(ctx context.Context, key, role, content string, now time.Time) (int, error)
	// BeginTurn ensures the session (as EnsureSession), marks it running with turnID and, unless prompt is "",
	// stores the prompt; it returns the prompt's index (-1 without one).
	BeginTurn(ctx context.Context, key, agentAlias, owner, turnID string, started time.Time, prompt string) (int, error)
	// EndTurn stores a turn's last message and sets the session's state, and returns the message's index.
	EndTurn(ctx context.Context, key, role, content string, now time.Time, state string) (int, error)
	Page(ctx context.Context, key string, limit, beforeIndex, maxBytes int) (msgs []Message, total, start int, err error)
	Message(ctx context.Context, key string, index int) (msg Message, total int, err error)
	All(ctx context.Context, key string) ([]Message, error)
	Meta(ctx context.Context, key string) (SessionMeta, error)
	Resolve(ctx context.Context, id string) (SessionMeta, error)
	List(ctx context.Context, query string, limit int) ([]SessionMeta, error)
	ListAttributed(ctx context.Context, query string, limit int) ([]SessionMeta, error)
	SetState(ctx context.Context, key, state, turnID string, startedAt *time.Time) error
	InterruptRunning(ctx context.Context) (int, error)
	Delete(ctx context.Context, key string) error
	CountByAgent(ctx context.Context) (map[string]int, error)
	RenameAgent(ctx context.Context, from, to string) (int, error)
	Close() error
}

var _ Chat = (*ChatStore)(nil)
