package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// CostRecord is one line of the cost ledger (state.md §7): one provider request and its usage.
type CostRecord struct {
	ID         string    `json:"id"`
	Usage      CostUsage `json:"usage"`
	SessionID  string    `json:"session_id"`
	AgentAlias string    `json:"agent_alias,omitempty"`
	GoalTaskID string    `json:"goal_task_id,omitempty"`
}

// CostUsage is the usage of one provider request, priced when it was recorded. Timestamp is RFC 3339 UTC.
// CachedInputTokens is omitted when 0; PricingAvailable is omitted when true (nil) and written false when the
// model had no price, as upstream's ledger does.
type CostUsage struct {
	Model             string  `json:"model"`
	InputTokens       int     `json:"input_tokens"`
	OutputTokens      int     `json:"output_tokens"`
	CachedInputTokens int     `json:"cached_input_tokens,omitempty"`
	TotalTokens       int     `json:"total_tokens"`
	CostUSD           float64 `json:"cost_usd"`
	PricingAvailable  *bool   `json:"pricing_available,omitempty"`
	Timestamp         string  `json:"timestamp"`
}

// Path is the ledger file.
func (l *CostLedger) Path() string { return l.path }

// CostLedger appends CostRecords to data/state/costs.jsonl, one JSON object per line. The file (mode 0600,
// directory 0700) is created on the first Record and opened with O_APPEND. It is safe for concurrent use:
// records are written whole, one at a time.
//
// A record is written to the file before Record returns, so a killed daemon (kill -9) never loses one; the
// fsync that makes it survive a machine crash runs in the background, one fsync covering every record written
// since the previous one, so that no turn waits on the disk for its cost line. Close waits for it.
type CostLedger struct {
	path string

	// mu guards the fields below and serializes writes.
	mu      sync.Mutex
	f       *os.File
	torn    bool // a previous write may have left a partial line
	closed  bool
	pending bool // a background fsync is scheduled and has not started yet

	syncs   sync.WaitGroup // background fsyncs in flight
	syncErr error          // the last background fsync's failure, reported by the next Record (guarded by mu)
}

// OpenCostLedger returns a ledger writing to path. It touches nothing on disk until the first Record.
func OpenCostLedger(path string) *CostLedger {
	return &CostLedger{path: path}
}

// Record appends r as one line and schedules its fsync (see CostLedger). A record that fails to write returns an
// error; the next record then starts on a fresh line so a partial line never swallows it. A background fsync
// that failed is reported by the next Record.
func (l *CostLedger) Record(ctx context.Context, r CostRecord) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store: cost record %s: %w", r.ID, err)
	}
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("store: cost record %s: %w", r.ID, err)
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return fmt.Errorf("store: cost record %s: %w", r.ID, ErrClosed)
	}
	if l.f == nil {
		if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
			return fmt.Errorf("store: cost ledger %s: %w", l.path, err)
		}
		f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return fmt.Errorf("store: cost ledger %s: %w", l.path, err)
		}
		l.f = f
	}
	if l.torn {
		line = append([]byte{'\n'}, line...)
	}
	if _, err := l.f.Write(line); err != nil {
		l.torn = true
		return fmt.Errorf("store: cost record %s: %w", r.ID, err)
	}
	l.torn = false
	if err := l.syncErr; err != nil {
		l.syncErr = nil
		return fmt.Errorf("store: cost record %s: an earlier record's sync failed: %w", r.ID, err)
	}
	if !l.pending {
		l.pending = true
		l.syncs.Add(1)
		go l.sync(l.f)
	}
	return nil
}

// sync fsyncs f for every record written before it starts; records written while it runs schedule another.
func (l *CostLedger) sync(f *os.File) {
	defer l.syncs.Done()
	l.mu.Lock()
	l.pending = false
	l.mu.Unlock()
	if err := f.Sync(); err != nil {
		l.mu.Lock()
		l.syncErr = err
		l.mu.Unlock()
	}
}

// Close waits for the background fsync, syncs and closes the file if it was opened. Later Records return
// ErrClosed; Close is idempotent.
func (l *CostLedger) Close() error {
	l.mu.Lock()
	l.closed = true
	f := l.f
	l.f = nil
	l.mu.Unlock()
	l.syncs.Wait()
	if f == nil {
		return nil
	}
	err := errors.Join(f.Sync(), f.Close())
	if err != nil {
		return fmt.Errorf("store: cost ledger %s: close: %w", l.path, err)
	}
	return nil
}
