// Package upstream holds the rules that read an older upstream config.toml (schema v1 or v2, which upstream
// zeroclaw wrote) as this runtime's schema v3. It works on a plain decoded TOML tree and knows no schema type:
// package config decodes the file, calls Migrate, renders the result with config/tomledit and decodes that.
//
// The rules turn the tree into upstream's schema v3 step by step as upstream does it (crates/zeroclaw-config:
// migration.rs, schema/v1.rs, schema/v2.rs): v1.go is the v1 → v2 step, v2.go the v2 → v3 step, whose
// sections have files of their own (providers, channels, cron, storage, agents). families.go then maps
// upstream's provider types onto this runtime's families. Sections this runtime does not model (channels,
// cron, storage, tts...) are migrated too, so that `config migrate` writes what upstream would write; decoding
// then reports them as unknown keys. Where upstream depends on a map's iteration order ("the first provider"),
// these rules take the sorted order, except that the default agent is bound to the provider the v1/v2 globals
// named, which is the provider an old install ran with.
package upstream

import "fmt"

// Result is one migrated tree with what the migration did.
type Result struct {
	Tree     map[string]any // schema v3, providers mapped onto this runtime's families
	Notes    []string       // what moved where
	Warnings []string       // what was dropped or cannot be used by this runtime
}

// Migrate rewrites root, a decoded config file of upstream schema version from (1 or 2; anything below 2 is
// taken as 1), as schema v3 and maps its providers onto this runtime's families. root is changed in place and
// must not be used afterwards. An error names what makes the file impossible to migrate (a section of the
// wrong type).
func Migrate(root map[string]any, from int) (*Result, error) {
	m := &migration{}
	var err error
	if from <= 1 {
		if root, err = m.v1ToV2(root); err != nil {
			return nil, err
		}
	}
	out, err := m.v2ToV3(root)
	if err != nil {
		return nil, err
	}
	m.mapFamilies(out)
	return &Result{Tree: out, Notes: m.notes, Warnings: m.warnings}, nil
}

// tree is a decoded TOML table.
type tree = map[string]any

// migration collects what one migration did: notes (what moved where) and warnings (what was dropped or
// cannot be used here).
type migration struct {
	notes    []string
	warnings []string
	// target is the "<type>.<alias>" the v1/v2 provider globals were folded onto, when they were.
	target string
}

func (m *migration) note(format string, args ...any) {
	m.notes = append(m.notes, fmt.Sprintf(format, args...))
}

func (m *migration) warn(format string, args ...any) {
	m.warnings = append(m.warnings, fmt.Sprintf(format, args...))
}
