package session

import (
	"context"
	"fmt"
	"maps"
	"math"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/agent"
	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// Configure merges patch into the live session's overrides (protocol: upstream's session/configure) and
// returns the result. A model_provider switch without a model drops the previous model override (it belonged
// to the other provider). The provider the merged overrides describe is built first, from the config in force:
// if it cannot be (an unknown reference, a bad setting), nothing changes. The next turn runs with it; a turn
// already running keeps the provider it started with.
func (m *Manager) Configure(ctx context.Context, o Owner, id string, patch api.SessionOverrides) (api.SessionConfigureResult, error) {
	if err := checkOverrides(patch); err != nil {
		return api.SessionConfigureResult{}, err
	}
	s, done, err := m.use(ctx, o, id)
	if err != nil {
		return api.SessionConfigureResult{}, err
	}
	defer done()
	s.configMu.Lock()
	defer s.configMu.Unlock()
	s.mu.Lock()
	merged := mergeOverrides(s.overrides, patch)
	s.mu.Unlock()

	cfg := m.o.Config()
	prof, err := agent.Resolve(cfg, s.alias, m.o.InstallRoot)
	if err != nil {
		return api.SessionConfigureResult{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	ref := prof.ProviderRef
	if merged.ModelProvider != nil {
		ref = *merged.ModelProvider
	}
	if _, err := m.o.NewProvider(withOverrides(cfg, ref, merged), ref); err != nil {
		return api.SessionConfigureResult{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return api.SessionConfigureResult{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	s.overrides = merged
	s.mu.Unlock()
	return api.SessionConfigureResult{SessionID: id, Overrides: merged}, nil
}

// checkOverrides refuses blank names and a temperature the providers cannot take.
func checkOverrides(p api.SessionOverrides) error {
	switch {
	case p.Model != nil && strings.TrimSpace(*p.Model) == "":
		return fmt.Errorf("%w: model must not be blank", ErrInvalid)
	case p.ModelProvider != nil && strings.TrimSpace(*p.ModelProvider) == "":
		return fmt.Errorf("%w: model_provider must not be blank", ErrInvalid)
	case p.Temperature != nil && (math.IsNaN(*p.Temperature) || *p.Temperature < 0 || *p.Temperature > 2):
		return fmt.Errorf("%w: temperature must be between 0 and 2, got %g", ErrInvalid, *p.Temperature)
	}
	return nil
}

func mergeOverrides(cur, patch api.SessionOverrides) api.SessionOverrides {
	if patch.ModelProvider != nil {
		cur.ModelProvider = patch.ModelProvider
		if patch.Model == nil {
			cur.Model = nil
		}
	}
	if patch.Model != nil {
		cur.Model = patch.Model
	}
	if patch.Temperature != nil {
		cur.Temperature = patch.Temperature
	}
	return cur
}

// provider builds the provider of s's next turn: the agent's (ref), or the session's override, with the
// session's model and temperature overrides applied.
func (m *Manager) provider(cfg *config.Config, s *session, ref string) (agent.Provider, error) {
	s.mu.Lock()
	ov := s.overrides
	s.mu.Unlock()
	if ov.ModelProvider != nil {
		ref = *ov.ModelProvider
	}
	return m.o.NewProvider(withOverrides(cfg, ref, ov), ref)
}

// withOverrides returns cfg with the provider entry ref carrying ov's model and temperature; cfg itself is an
// immutable snapshot and is not modified (only the maps on the way to the entry are copied).
func withOverrides(cfg *config.Config, ref string, ov api.SessionOverrides) *config.Config {
	family, alias, _ := strings.Cut(ref, ".")
	pc, ok := cfg.Providers.Models[family][alias]
	if !ok || (ov.Model == nil && ov.Temperature == nil) {
		return cfg
	}
	if ov.Model != nil {
		pc.Model = *ov.Model
	}
	if ov.Temperature != nil {
		pc.Temperature = ov.Temperature
	}
	c := *cfg
	c.Providers.Models = maps.Clone(cfg.Providers.Models)
	entries := maps.Clone(cfg.Providers.Models[family])
	entries[alias] = pc
	c.Providers.Models[family] = entries
	return &c
}
