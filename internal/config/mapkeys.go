package config

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode"

	"github.com/zeroclaw-go/zeroclaw/internal/config/tomledit"
)

// Errors of the map-key operations; each is invalid params on the wire.
var (
	// ErrNoMapSection is returned for a path that is not a map-keyed section (a map of entries).
	ErrNoMapSection = errors.New("config: no map-keyed section")
	// ErrInvalidKey is returned for an entry key that cannot be created or renamed to.
	ErrInvalidKey = errors.New("config: invalid key")
)

// ReservedAgent is the agent alias that cannot be created or renamed through map-key operations (upstream
// reserves it for its runtime fallback; we keep the rule so both daemons accept the same edits).
const ReservedAgent = "default"

// MaxKeyBytes bounds an entry key.
const MaxKeyBytes = 63

// mapSection is a resolved map-keyed section: a map whose values are entries (tables), or, for
// providers.models, a map of provider families whose values are maps of entries.
type mapSection struct {
	path     Path
	families bool // the keys are provider families (providers.models)
	freeKeys bool // the keys are names from elsewhere (model names under cost.prices), not aliases
}

func (s mapSection) String() string { return s.path.String() }

// section resolves a user-written path to a map-keyed section.
func section(path string) (mapSection, error) {
	r, err := normalize(path)
	if err != nil || r.typ.Kind() != reflect.Map {
		return mapSection{}, fmt.Errorf("%w at `%s`", ErrNoMapSection, path)
	}
	switch elem := r.typ.Elem(); {
	case elem.Kind() == reflect.Struct:
		return mapSection{path: r.path, freeKeys: r.path.String() == "cost.prices"}, nil
	case elem.Kind() == reflect.Map && elem.Elem().Kind() == reflect.Struct:
		return mapSection{path: r.path, families: true}, nil
	}
	return mapSection{}, fmt.Errorf("%w at `%s`", ErrNoMapSection, path)
}

// entry is the path of key's entry in the section.
func (s mapSection) entry(key string) Path { return slices.Concat(s.path, Path{key}) }

// checkKey refuses a key that the section cannot hold.
func (s mapSection) checkKey(key string) error {
	if s.families {
		if !slices.Contains(Families, key) {
			return fmt.Errorf("%w: %q is not a provider family (%s)", ErrInvalidKey, key, strings.Join(Families, ", "))
		}
		return nil
	}
	if s.freeKeys {
		if key == "" || len(key) > 128 || strings.ContainsFunc(key, func(r rune) bool { return unicode.IsControl(r) || r == unicode.ReplacementChar }) {
			return fmt.Errorf("%w: %q must be 1 to 128 printable characters", ErrInvalidKey, key)
		}
		return nil
	}
	return checkAlias(key)
}

// checkAlias applies upstream's alias rule: 1..63 lowercase letters, digits and single underscores, starting
// and ending with a letter or digit (a double underscore is the environment-variable path separator).
func checkAlias(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: alias must not be empty", ErrInvalidKey)
	case len(key) > MaxKeyBytes:
		return fmt.Errorf("%w: alias %q is longer than %d characters", ErrInvalidKey, key, MaxKeyBytes)
	case strings.Contains(key, "__"):
		return fmt.Errorf("%w: alias %q must not contain \"__\"", ErrInvalidKey, key)
	}
	for i, r := range key {
		alnum := r >= 'a' && r <= 'z' || r >= '0' && r <= '9'
		if !alnum && (r != '_' || i == 0 || i == len(key)-1) {
			return fmt.Errorf("%w: alias %q: only lowercase letters, digits and single underscores (not first or last) are allowed", ErrInvalidKey, key)
		}
	}
	return nil
}

// MapKeys returns the keys of the map-keyed section at path in the live config, sorted. A family section with
// no entries (providers.models.openai when none is configured) has no keys.
func (m *Manager) MapKeys(path string) ([]string, error) {
	s, err := section(path)
	if err != nil {
		return nil, err
	}
	keys := []string{}
	if v, ok := lookup(m.Current(), s.path); ok {
		for _, k := range v.MapKeys() {
			keys = append(keys, k.String())
		}
	}
	slices.Sort(keys)
	return keys, nil
}

// CreateMapKey adds the entry key to the section at path (created false: it exists). The new entry gets what
// it needs to be valid: an agent the provider and risk profile of the default agent (else the first ones
// configured), a provider entry its family's first catalogue model, a risk profile level "supervised" with
// workspace_only. authorize is called with the entry's path under the config write lock, as for SetMany.
func (m *Manager) CreateMapKey(ctx context.Context, path, key string, authorize func([]string) error) (bool, error) {
	s, err := section(path)
	if err != nil {
		return false, err
	}
	if err := s.checkKey(key); err != nil {
		return false, err
	}
	if s.path.String() == "agents" && key == ReservedAgent {
		return false, fmt.Errorf("%w: alias %q is reserved and cannot be created", ErrInvalidKey, key)
	}
	entry := s.entry(key)
	return m.edit(ctx, "create", []string{entry.String()}, authorize, func(raw []byte, cfg *Config) ([]byte, bool, []string, error) {
		if _, ok := lookup(cfg, entry); ok {
			return raw, false, nil, nil
		}
		out, err := tomledit.EnsureTable(m.path, raw, entry)
		if err != nil {
			return nil, false, nil, err
		}
		for _, seed := range seeds(s, entry, cfg) {
			if out, err = tomledit.Set(m.path, out, seed.path, seed.lit); err != nil {
				return nil, false, nil, err
			}
		}
		return out, true, nil, nil
	})
}

// DeleteMapKey removes the entry key and everything in it from the section at path (deleted false: there was
// none). A deletion that leaves a reference dangling (an agent naming a deleted provider) fails validation and
// changes nothing.
func (m *Manager) DeleteMapKey(ctx context.Context, path, key string, authorize func([]string) error) (bool, error) {
	s, err := section(path)
	if err != nil {
		return false, err
	}
	if key == "" {
		return false, fmt.Errorf("%w: key must not be empty", ErrInvalidKey)
	}
	entry := s.entry(key)
	return m.edit(ctx, "delete", []string{entry.String()}, authorize, func(raw []byte, _ *Config) ([]byte, bool, []string, error) {
		out, found, err := tomledit.DeleteEntry(m.path, raw, entry)
		return out, found, nil, err
	})
}

// RenameMapKey renames the entry from to to in the section at path (renamed false: from does not exist) and
// rewrites the references that follow it: agents' model_provider and risk_profile, acp.default_agent, users'
// permission_profiles, permission profiles' allowed_agents. authorize is called with every path the rename
// writes (both entry paths and each rewritten reference). The agent alias ReservedAgent can be neither renamed
// nor taken.
func (m *Manager) RenameMapKey(ctx context.Context, path, from, to string, authorize func([]string) error) (bool, error) {
	s, err := section(path)
	if err != nil {
		return false, err
	}
	switch {
	case s.families:
		return false, fmt.Errorf("%w: %s: provider families cannot be renamed", ErrNotEditable, s)
	case from == to:
		return false, fmt.Errorf("%w: the new key must differ from the current one", ErrInvalidKey)
	case s.path.String() == "agents" && (from == ReservedAgent || to == ReservedAgent):
		return false, fmt.Errorf("%w: alias %q is reserved and cannot be renamed", ErrInvalidKey, ReservedAgent)
	}
	if err := s.checkKey(to); err != nil {
		return false, err
	}
	if from == "" {
		return false, fmt.Errorf("%w: from must not be empty", ErrInvalidKey)
	}
	src, dst := s.entry(from), s.entry(to)
	return m.edit(ctx, "rename", nil, authorize, func(raw []byte, cfg *Config) ([]byte, bool, []string, error) {
		if _, ok := lookup(cfg, src); !ok {
			return raw, false, nil, nil
		}
		if _, ok := lookup(cfg, dst); ok {
			return nil, false, nil, fmt.Errorf("%w: %s already exists", ErrInvalidKey, dst)
		}
		out, renamed, err := tomledit.RenameEntry(m.path, raw, src, dst)
		if err != nil || !renamed {
			return out, renamed, nil, err
		}
		written := []string{src.String(), dst.String()}
		for _, ref := range references(s, from, to, cfg) {
			if out, err = tomledit.Set(m.path, out, ref.path, ref.lit); err != nil {
				return nil, false, nil, err
			}
			written = append(written, ref.path.String())
		}
		return out, true, written, nil
	})
}

// edit runs one map-key change: under the config write lock it reads the file and its plain decoding (no
// environment, secrets as stored), lets change compute the new text and the paths it writes (nil: props),
// authorizes them, then commits like SetMany. changed false leaves everything as it is.
func (m *Manager) edit(ctx context.Context, op string, props []string, authorize func([]string) error,
	change func(raw []byte, cfg *Config) (out []byte, changed bool, written []string, err error)) (bool, error) {
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("config: %s: %w", op, err)
	}
	raw, err := m.fs.ReadFile(m.path)
	if err != nil {
		return false, fmt.Errorf("config: read %s: %w", m.path, err)
	}
	if err := refuseOldSchema(m.path, raw); err != nil {
		return false, err
	}
	d, err := tomledit.Parse(m.path, raw)
	if err != nil {
		return false, err
	}
	cfg, _, errs := decode(d)
	if len(errs) > 0 {
		return false, errs[0]
	}
	if authorize != nil && props != nil {
		if err := authorize(props); err != nil {
			return false, err
		}
	}
	out, changed, written, err := change(raw, cfg)
	if err != nil || !changed {
		return false, err
	}
	if written != nil {
		props = written
		if authorize != nil {
			if err := authorize(props); err != nil {
				return false, err
			}
		}
	}
	if err := m.commit(raw, out, props); err != nil {
		return false, err
	}
	return true, nil
}

// textEdit is one key to write: its path and TOML literal.
type textEdit struct {
	path Path
	lit  string
}

// seeds are the keys a new entry needs to pass validation.
func seeds(s mapSection, entry Path, cfg *Config) []textEdit {
	switch {
	case s.path.String() == "agents":
		var out []textEdit
		def := cfg.Agents[ReservedAgent]
		provider, profile := def.ModelProvider, def.RiskProfile
		if provider == "" {
			provider = firstProvider(cfg)
		}
		if profile == "" {
			profile = firstKey(cfg.RiskProfiles, LevelSupervised)
		}
		if provider != "" {
			out = append(out, textEdit{slices.Concat(entry, Path{"model_provider"}), tomledit.Quote(provider)})
		}
		if profile != "" {
			out = append(out, textEdit{slices.Concat(entry, Path{"risk_profile"}), tomledit.Quote(profile)})
		}
		return out
	case len(s.path) == 3 && s.path[0] == "providers" && s.path[1] == "models":
		if models := CatalogModels(s.path[2]); len(models) > 0 {
			return []textEdit{{slices.Concat(entry, Path{"model"}), tomledit.Quote(models[0])}}
		}
	case s.path.String() == "risk_profiles":
		return []textEdit{
			{slices.Concat(entry, Path{"level"}), tomledit.Quote(LevelSupervised)},
			{slices.Concat(entry, Path{"workspace_only"}), "true"},
		}
	}
	return nil
}

// firstProvider is the first configured "<family>.<alias>", in sorted order ("" if none).
func firstProvider(cfg *Config) string {
	for _, fam := range sortedKeys(cfg.Providers.Models) {
		if aliases := sortedKeys(cfg.Providers.Models[fam]); len(aliases) > 0 {
			return fam + "." + aliases[0]
		}
	}
	return ""
}

// firstKey returns prefer if m has it, else m's first key in sorted order ("" if none).
func firstKey[V any](m map[string]V, prefer string) string {
	if _, ok := m[prefer]; ok {
		return prefer
	}
	if keys := sortedKeys(m); len(keys) > 0 {
		return keys[0]
	}
	return ""
}

// references are the keys to rewrite so that what named from names to.
func references(s mapSection, from, to string, cfg *Config) []textEdit {
	var out []textEdit
	switch sec := s.path.String(); {
	case sec == "agents":
		if cfg.ACP.DefaultAgent == from {
			out = append(out, textEdit{Path{"acp", "default_agent"}, tomledit.Quote(to)})
		}
		for _, name := range sortedKeys(cfg.PermissionProfiles) {
			if agents := cfg.PermissionProfiles[name].AllowedAgents; slices.Contains(agents, from) {
				out = append(out, textEdit{Path{"permission_profiles", name, "allowed_agents"}, quoteList(agents, from, to)})
			}
		}
	case sec == "risk_profiles":
		for _, name := range sortedKeys(cfg.Agents) {
			if cfg.Agents[name].RiskProfile == from {
				out = append(out, textEdit{Path{"agents", name, "risk_profile"}, tomledit.Quote(to)})
			}
		}
	case sec == "permission_profiles":
		for _, name := range sortedKeys(cfg.Users) {
			profiles := cfg.Users[name].PermissionProfiles
			if !slices.Contains(profiles, from) {
				continue
			}
			out = append(out, textEdit{Path{"users", name, "permission_profiles"}, quoteList(profiles, from, to)})
		}
	case len(s.path) == 3 && s.path[0] == "providers" && s.path[1] == "models":
		old, repl := s.path[2]+"."+from, s.path[2]+"."+to
		for _, name := range sortedKeys(cfg.Agents) {
			if cfg.Agents[name].ModelProvider == old {
				out = append(out, textEdit{Path{"agents", name, "model_provider"}, tomledit.Quote(repl)})
			}
		}
	}
	return out
}

// quoteList is list as a TOML array literal, from renamed to.
func quoteList(list []string, from, to string) string {
	lits := make([]string, len(list))
	for i, e := range list {
		if e == from {
			e = to
		}
		lits[i] = tomledit.Quote(e)
	}
	return "[" + strings.Join(lits, ", ") + "]"
}

// Validate reads config.toml as it is on disk now and reports whether it would load (nil) or why not, with the
// warnings loading it would log. The live config is not touched.
func (m *Manager) Validate() ([]string, error) {
	raw, err := m.fs.ReadFile(m.path)
	if err != nil {
		return nil, fmt.Errorf("config: read %s: %w", m.path, err)
	}
	st, err := build(m.path, raw, m.environ, m.box)
	if err != nil {
		return nil, err
	}
	return st.warnings, nil
}
