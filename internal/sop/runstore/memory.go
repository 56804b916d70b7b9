package runstore

import (
	"context"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"
)

// Memory is the fallback backend: the same contract as SQLite, nothing survives the process. It is used when
// persist_runs is false, run_store_backend is "memory", or runs.db cannot be opened.
type Memory struct {
	mu     sync.Mutex // guards the fields below
	runs   map[string]*memRun
	order  int
	events []Event
	seq    uint64
	claims map[string]Claim
	holder string
}

type memRun struct {
	Record
	order int
}

// NewMemory returns an empty memory store.
func NewMemory() *Memory {
	return &Memory{runs: map[string]*memRun{}, claims: map[string]Claim{}, holder: fmt.Sprintf("pid-%d", os.Getpid())}
}

// Backend implements Store.
func (m *Memory) Backend() string { return "memory" }

// Close implements Store.
func (m *Memory) Close() error { return nil }

func (m *Memory) put(r Record, terminal bool) error {
	if old, ok := m.runs[r.RunID]; ok {
		if !terminal && old.Terminal {
			return fmt.Errorf("%w: run %s is already terminal", ErrStaleRevision, r.RunID)
		}
		if err := guard(r.RunID, old.Revision, old.JSON, r); err != nil {
			return err
		}
		r.Terminal = terminal
		r.JSON = append([]byte(nil), r.JSON...)
		old.Record = r
		return nil
	}
	m.order++
	r.Terminal = terminal
	r.JSON = append([]byte(nil), r.JSON...)
	m.runs[r.RunID] = &memRun{Record: r, order: m.order}
	return nil
}

func (m *Memory) appendLocked(evs []Event) {
	for _, e := range evs {
		m.seq++
		e.Seq = m.seq
		if len(e.Payload) == 0 {
			e.Payload = []byte("{}")
		}
		m.events = append(m.events, e)
	}
}

// Save implements Store.
func (m *Memory) Save(_ context.Context, r Record, evs ...Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.put(r, false); err != nil {
		return err
	}
	m.appendLocked(evs)
	return nil
}

// Finish implements Store.
func (m *Memory) Finish(_ context.Context, r Record, evs ...Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.put(r, true); err != nil {
		return err
	}
	delete(m.claims, r.RunID)
	m.appendLocked(evs)
	return nil
}

// Append implements Store.
func (m *Memory) Append(_ context.Context, evs ...Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.appendLocked(evs)
	return nil
}

func (m *Memory) list(terminal bool) []*memRun {
	var out []*memRun
	for _, r := range m.runs {
		if r.Terminal == terminal {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].order < out[j].order })
	return out
}

// Active implements Store.
func (m *Memory) Active(context.Context) ([]Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Record
	for _, r := range m.list(false) {
		out = append(out, r.Record)
	}
	return out, nil
}

func newestFirst(rs []*memRun) {
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].LastProgressAt != rs[j].LastProgressAt {
			return rs[i].LastProgressAt > rs[j].LastProgressAt
		}
		return rs[i].order > rs[j].order
	})
}

// Terminal implements Store.
func (m *Memory) Terminal(_ context.Context, limit int) ([]Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rs := m.list(true)
	newestFirst(rs)
	var out []Record
	for i, r := range rs {
		if limit > 0 && i >= limit {
			break
		}
		out = append(out, r.Record)
	}
	return out, nil
}

// Load implements Store.
func (m *Memory) Load(_ context.Context, runID string) (Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.runs[runID]; ok {
		return r.Record, nil
	}
	return Record{}, fmt.Errorf("%w: %s", ErrNotFound, runID)
}

// Events implements Store.
func (m *Memory) Events(_ context.Context, runID string) ([]Event, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Event
	for _, e := range m.events {
		if e.RunID == runID {
			out = append(out, e)
		}
	}
	return out, nil
}

// Claim implements Store.
func (m *Memory) Claim(_ context.Context, runID, sopName string, perSOP, total int, now time.Time) (Claim, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.runs[runID]; ok && r.Terminal {
		return Claim{}, false, nil
	}
	if _, ok := m.claims[runID]; ok {
		return Claim{}, false, nil
	}
	per := 0
	for _, c := range m.claims {
		if c.SopName == sopName {
			per++
		}
	}
	if per >= perSOP || len(m.claims) >= total {
		return Claim{}, false, nil
	}
	c := leaseClaim(runID, sopName, m.holder, now)
	m.claims[runID] = c
	return c, true, nil
}

// Renew implements Store.
func (m *Memory) Renew(_ context.Context, runID, sopName string, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.claims[runID] = leaseClaim(runID, sopName, m.holder, now)
	return nil
}

// Release implements Store.
func (m *Memory) Release(_ context.Context, runID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.claims, runID)
	return nil
}

// ClaimCounts implements Store.
func (m *Memory) ClaimCounts(_ context.Context, sopName string) (int, int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	per := 0
	for _, c := range m.claims {
		if c.SopName == sopName {
			per++
		}
	}
	return per, len(m.claims), nil
}

// ReapExpired implements Store.
func (m *Memory) ReapExpired(_ context.Context, now time.Time) ([]Claim, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cut := now.UTC().Format(time.RFC3339)
	var out []Claim
	for id, c := range m.claims {
		if c.LeaseExpires < cut {
			out = append(out, c)
			delete(m.claims, id)
		}
	}
	return out, nil
}

// Prune implements Store.
func (m *Memory) Prune(_ context.Context, keep int) (int, error) {
	if keep <= 0 {
		return 0, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	rs := m.list(true)
	newestFirst(rs)
	if len(rs) <= keep {
		return 0, nil
	}
	gone := map[string]bool{}
	for _, r := range rs[keep:] {
		gone[r.RunID] = true
		delete(m.runs, r.RunID)
	}
	kept := m.events[:0]
	for _, e := range m.events {
		if !gone[e.RunID] {
			kept = append(kept, e)
		}
	}
	m.events = kept
	return len(gone), nil
}

// Claims implements Store.
func (m *Memory) Claims(context.Context) ([]Claim, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Claim, 0, len(m.claims))
	for _, c := range m.claims {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RunID < out[j].RunID })
	return out, nil
}
