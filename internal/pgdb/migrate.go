package pgdb

import (
	"context"
	"errors"
	"fmt"
)

// Migration is one step of a component's schema: Version counts from 1 without gaps, and a step once released
// never changes (a later step alters what an earlier one made).
type Migration struct {
	Version int
	Name    string
	SQL     string // statements without parameters, run with the simple query protocol
}

// ErrSchemaNewer is the error of Migrate on a database that a newer daemon has already migrated past what this
// one knows: it must not write there.
var ErrSchemaNewer = errors.New("pgdb: the database schema is newer than this daemon")

// versionsDDL is the table of applied steps, one row per component and version.
const versionsDDL = `CREATE TABLE IF NOT EXISTS zc_schema_versions (
    component  TEXT NOT NULL,
    version    INTEGER NOT NULL,
    name       TEXT NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (component, version)
)`

// Migrate brings component's schema up to date in one transaction, under a transaction-scoped advisory lock on
// the component's name: of several daemons starting at once, one applies the missing steps and the others wait,
// then find nothing to do. It returns the version the database is at.
func Migrate(ctx context.Context, p *Pool, component string, steps []Migration) (int, error) {
	for i, m := range steps {
		if m.Version != i+1 {
			return 0, fmt.Errorf("pgdb: %s: migration %d has version %d (versions count from 1 without gaps)", component, i+1, m.Version)
		}
	}
	var at int
	err := p.InTx(ctx, func(tx *Tx) error {
		// The lock covers creating the versions table too: CREATE TABLE IF NOT EXISTS is not safe against a
		// concurrent create of the same table.
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext('zeroclaw-schema'))"); err != nil {
			return err
		}
		if err := tx.Script(ctx, versionsDDL); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, "SELECT coalesce(max(version), 0) FROM zc_schema_versions WHERE component = $1", component)
		if err != nil {
			return err
		}
		n, err := rows[0].Int64(0)
		if err != nil {
			return err
		}
		at = int(n)
		if at > len(steps) {
			return fmt.Errorf("%w: %s is at version %d, this daemon knows %d: upgrade this daemon", ErrSchemaNewer, component, at, len(steps))
		}
		for _, m := range steps[at:] {
			if err := tx.Script(ctx, m.SQL); err != nil {
				return fmt.Errorf("pgdb: %s migration %d (%s): %w", component, m.Version, m.Name, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO zc_schema_versions (component, version, name) VALUES ($1, $2, $3)", component, m.Version, m.Name); err != nil {
				return err
			}
			at = m.Version
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return at, nil
}
