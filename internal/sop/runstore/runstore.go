// Package runstore keeps SOP runs durable: <run_state_dir>/runs.db with upstream's schema (so upstream's
// zeroclaw can open the file), a revision guard on every write, admission claims as leases, an append-only
// event ledger per run, and a memory fallback with the same contract for when the file cannot be opened.
package runstore

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Version is the PersistedRun envelope version upstream writes (SOP_STORE_VERSION).
const Version = 1

// LeaseDuration is how long a claim lives without a heartbeat (upstream's DEFAULT_CLAIM_LEASE_SECS).
const LeaseDuration = time.Hour

// Sentinels. StaleRevision and RevisionConflict are the revision guard's two refusals.
var (
	ErrStaleRevision    = errors.New("runstore: stale revision")
	ErrRevisionConflict = errors.New("runstore: revision conflict")
	ErrNotFound         = errors.New("runstore: run not found")
	ErrClosed           = errors.New("runstore: closed")
)

// Record is one row of sop_runs: the engine's PersistedRun JSON envelope with the columns upstream indexes.
// JSON is stored byte for byte; the guard compares it byte for byte.
type Record struct {
	RunID          string
	SopName        string // not a column: used for claims and cooldown lookups by the memory store
	Revision       uint64
	Terminal       bool
	LastProgressAt string
	JSON           []byte
}

// Event is one row of the append-only ledger sop_events. Payload is a JSON value ("{}" when empty).
type Event struct {
	Seq     uint64 `json:"seq"`
	RunID   string `json:"run_id"`
	TS      string `json:"ts"`
	Kind    string `json:"kind"`
	Actor   string `json:"actor,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Payload []byte `json:"-"`
}

// Claim is an admission lease (upstream's ClaimToken), stored as JSON in sop_claims.
type Claim struct {
	RunID        string `json:"run_id"`
	SopName      string `json:"sop_name"`
	ClaimedAt    string `json:"claimed_at"`
	LeaseExpires string `json:"lease_expires"`
	Holder       string `json:"holder"`
}

// Store is the contract both backends keep. Every write that returns nil is durable for the backend
// (committed to the database for SQLite); the engine acknowledges nothing before that.
type Store interface {
	// Save writes an active run (terminal = 0), and appends evs in the same transaction. The revision guard
	// applies: a lower revision than stored is ErrStaleRevision, the same revision with other JSON
	// ErrRevisionConflict, the same revision and JSON is accepted without change.
	Save(ctx context.Context, r Record, evs ...Event) error
	// Finish writes the run as terminal, deletes its claim and appends evs, all in one transaction.
	Finish(ctx context.Context, r Record, evs ...Event) error
	// Append appends events to the ledger (append-only; there is no update or delete except Prune's).
	Append(ctx context.Context, evs ...Event) error
	// Active returns every non-terminal run; Terminal the newest limit terminal runs (0 = all), newest first.
	Active(ctx context.Context) ([]Record, error)
	Terminal(ctx context.Context, limit int) ([]Record, error)
	Load(ctx context.Context, runID string) (Record, error)
	Events(ctx context.Context, runID string) ([]Event, error)
	// Claim takes an admission lease for runID when fewer than perSOP claims of sopName and fewer than total
	// claims exist; ok is false when a cap is reached, the run is terminal or already claimed.
	Claim(ctx context.Context, runID, sopName string, perSOP, total int, now time.Time) (c Claim, ok bool, err error)
	// Renew extends the lease of runID's claim, creating it when absent (restore: no cap check).
	Renew(ctx context.Context, runID, sopName string, now time.Time) error
	Release(ctx context.Context, runID string) error
	// Claims lists every claim held.
	Claims(ctx context.Context) ([]Claim, error)
	// ClaimCounts returns the claims held for sopName and in total.
	ClaimCounts(ctx context.Context, sopName string) (perSOP, total int, err error)
	// ReapExpired deletes claims whose lease ended before now and returns them.
	ReapExpired(ctx context.Context, now time.Time) ([]Claim, error)
	// Prune keeps the newest keep terminal runs (by last_progress_at) and deletes the rest with their events.
	// keep 0 keeps everything.
	Prune(ctx context.Context, keep int) (int, error)
	// Backend is "sqlite" or "memory".
	Backend() string
	Close() error
}

func leaseClaim(runID, sopName, holder string, now time.Time) Claim {
	return Claim{RunID: runID, SopName: sopName, ClaimedAt: now.UTC().Format(time.RFC3339),
		LeaseExpires: now.Add(LeaseDuration).UTC().Format(time.RFC3339), Holder: holder}
}

func guard(runID string, storedRev uint64, storedJSON []byte, r Record) error {
	if r.Revision < storedRev {
		return fmt.Errorf("%w: run %s has revision %d, write carries %d", ErrStaleRevision, runID, storedRev, r.Revision)
	}
	if r.Revision == storedRev && string(storedJSON) != string(r.JSON) {
		return fmt.Errorf("%w: run %s revision %d written with different content", ErrRevisionConflict, runID, r.Revision)
	}
	return nil
}
