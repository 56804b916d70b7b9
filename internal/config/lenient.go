package config

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/zeroclaw-go/zeroclaw/internal/secrets"
)

// A daemon starts, as upstream's does, on a config that parses but has broken entries: each broken entry (an
// agent naming a missing provider, a value of the wrong type under one alias) is left out of the running
// config with a warning naming its path and line, and everything else runs. What "entry" means:
//
//   - under a map (providers.models.<family>.<alias>, agents.<alias>, risk_profiles.<name>, users.<name>,
//     permission_profiles.<name>, cost.prices.<model>): that whole map entry is removed, and whatever referred
//     to it fails validation in turn and is removed too (an agent whose provider is gone);
//   - a plain setting ([gateway] port, [rpc] limits...): it falls back to its default.
//
// Removing an entry never grants more than the file asked for: a removed user or permission profile grants
// nothing, a removed agent or provider serves nothing. schema_version cannot be disabled, and a load that
// leaves no enabled agent while it disabled something fails: there would be nothing to run.

// maxDisableRounds bounds the cascade (a provider, then its agents, then acp.default_agent).
const maxDisableRounds = 8

// buildLenient derives a state from raw like build, except that broken entries are disabled (listed in
// state.disabled, each with a warning) instead of failing the whole load. Syntax errors, environment override
// errors, secrets that cannot be decrypted, and problems that cannot be disabled are still errors.
func buildLenient(path string, raw []byte, environ []string, box *secrets.Box) (*state, error) {
	dec, err := decodeFile(path, raw)
	if err != nil {
		return nil, err
	}
	cfg := dec.cfg
	var disabled []Problem
	for _, fe := range dec.typeErrs {
		p := Problem{Path: fe.Key, Message: fe.Msg, Line: fe.Line}
		if !disable(cfg, p.Path) {
			return nil, fe
		}
		disabled = append(disabled, p)
	}
	envProps, envWarn, err := applyEnv(cfg, environ)
	if err != nil {
		return nil, err
	}
	warnings := append(dec.warnings, envWarn...)
	if box != nil {
		if err := decryptAll(cfg, box); err != nil {
			return nil, err
		}
	}
	var vwarn []string
	for round := 0; ; round++ {
		var verr *ValidationError
		verr, vwarn = validate(cfg, dec.doc, dec.doc.File)
		if verr == nil {
			break
		}
		if round == maxDisableRounds {
			return nil, verr
		}
		for _, p := range verr.Problems {
			if !disable(cfg, p.Path) {
				return nil, &ValidationError{File: verr.File, Problems: append(disabled, verr.Problems...)}
			}
			disabled = append(disabled, p)
		}
	}
	warnings = append(warnings, vwarn...)
	if len(disabled) > 0 && !hasEnabledAgent(cfg) {
		return nil, &ValidationError{File: dec.doc.File, Problems: disabled}
	}
	for _, p := range disabled {
		warnings = append(warnings, fmt.Sprintf("config: %s disabled: %s", entryOf(p.Path), p))
	}
	return &state{raw: raw, cfg: cfg, envProps: envProps, warnings: warnings, from: dec.from, disabled: disabled, docName: dec.doc.File}, nil
}

// Check reads raw (the file at path) as a daemon's start does and returns every problem it has: values of the
// wrong type and validation problems, including those of entries another problem disables. linesIn names what
// the problems' line numbers refer to: path itself, or for an older schema its migration to v3 (what `zeroclaw
// config migrate --dry-run` prints). warnings are the load's other warnings. err is a failure no load gets past
// (a syntax error, a bad environment override, a secret that cannot be decrypted).
func Check(path string, raw []byte, environ []string, box *secrets.Box) (warnings []string, linesIn string, problems []Problem, err error) {
	st, err := buildLenient(path, raw, environ, box)
	var ve *ValidationError
	if errors.As(err, &ve) {
		return nil, ve.File, ve.Problems, nil
	}
	if err != nil {
		return nil, "", nil, err
	}
	return st.warnings[:len(st.warnings)-len(st.disabled)], st.docName, st.disabled, nil
}

func hasEnabledAgent(cfg *Config) bool {
	for _, a := range cfg.Agents {
		if a.IsEnabled() {
			return true
		}
	}
	return false
}

// mapSections are the top-level maps whose entries are disabled as a whole.
var mapSections = map[string]int{ // section => length of an entry's path
	"agents": 2, "risk_profiles": 2, "users": 2, "permission_profiles": 2,
}

// entryLen returns how many segments of p name the entry a problem at p disables: a map entry, else the leaf.
func entryLen(p Path) int {
	if len(p) == 0 {
		return 0
	}
	if n, ok := mapSections[p[0]]; ok {
		return min(n, len(p))
	}
	switch {
	case len(p) >= 2 && p[0] == "providers" && p[1] == "models":
		return min(4, len(p))
	case len(p) >= 2 && p[0] == "cost" && p[1] == "prices":
		return min(3, len(p))
	case p[0] == "heartbeat": // a broken heartbeat is turned off whole (its default), never half-configured
		return 1
	}
	return len(p)
}

// entryOf names the entry a problem at path disables.
func entryOf(path string) string {
	p, err := ParsePath(path)
	if err != nil {
		return path
	}
	return p[:entryLen(p)].String()
}

// disable removes the map entry the problem at path belongs to, or resets the setting at path to its default.
// It reports false when the problem cannot be disabled.
func disable(cfg *Config, path string) bool {
	p, err := ParsePath(path)
	if err != nil || len(p) == 0 || p[0] == "schema_version" {
		return false
	}
	if len(p) >= 2 && p[0] == "storage" && p[1] == "backend" {
		// Falling back to sqlite would run this daemon's jobs apart from the daemons it shares them with (each
		// would run them): a bad shared backend stops the start instead.
		return false
	}
	p = p[:entryLen(p)]
	err = removeOrReset(reflect.ValueOf(cfg).Elem(), p, p)
	return err == nil
}

var errNotDisableable = errors.New("config: cannot be disabled")

// removeOrReset walks v along rest: a map entry at the end of the path is deleted, a struct field is set to
// its default; a path into a map entry that does not exist is already disabled.
func removeOrReset(v reflect.Value, full, rest Path) error {
	switch v.Kind() {
	case reflect.Struct:
		f, ok := fieldByTag(v.Type(), rest[0])
		if !ok {
			return errNotDisableable
		}
		fv := v.FieldByIndex(f.Index)
		if len(rest) == 1 {
			fv.Set(defaultAtOrZero(full, fv.Type()))
			return nil
		}
		return removeOrReset(fv, full, rest[1:])
	case reflect.Map:
		key := reflect.ValueOf(rest[0])
		cur := v.MapIndex(key)
		if !cur.IsValid() {
			return nil
		}
		if len(rest) == 1 {
			v.SetMapIndex(key, reflect.Value{})
			return nil
		}
		elem := reflect.New(cur.Type()).Elem()
		elem.Set(cur)
		if err := removeOrReset(elem, full, rest[1:]); err != nil {
			return err
		}
		v.SetMapIndex(key, elem)
		return nil
	}
	return errNotDisableable
}

// defaultAtOrZero is the default of the setting at p, or the zero value of t when it has none.
func defaultAtOrZero(p Path, t reflect.Type) reflect.Value {
	if d := defaultAt(p); d.IsValid() && d.Type() == t {
		return d
	}
	return reflect.Zero(t)
}
