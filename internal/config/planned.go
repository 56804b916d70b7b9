package config

import (
	"bytes"
	"context"
	"fmt"
)

// PlanFunc decides a set batch from the config in force. It runs under the config write lock, so what it reads
// (which aliases exist, say) stays true until the batch is written; it must not edit the config. An error it
// returns is passed back as is and nothing is written.
type PlanFunc func(cfg *Config) ([]SetEntry, error)

// Preview is a batch staged but not written: the file as it is and as the batch would leave it.
type Preview struct {
	Before, After []byte
	Props         []string // the props the batch writes, in order of first appearance
}

// Changed reports whether the batch would change the file.
func (p Preview) Changed() bool { return !bytes.Equal(p.Before, p.After) }

// Preview runs plan and stages its batch exactly as SetPlanned would (schema_version stamped, secrets
// encrypted, the candidate validated as a whole), without writing anything or swapping the live config.
func (m *Manager) Preview(ctx context.Context, plan PlanFunc) (Preview, error) {
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	before, after, _, props, err := m.planned(ctx, "preview", plan, nil)
	if err != nil {
		return Preview{}, err
	}
	return Preview{Before: before, After: after, Props: firstSeen(props)}, nil
}

// SetPlanned is SetMany for a batch decided under the write lock by plan. When expect is non-nil it is the
// file a Preview showed the user: if config.toml no longer holds exactly those bytes the write is refused with
// ErrDrifted, so what is written is what was shown. authorize is as for SetMany. Any failure leaves the file
// and the live config unchanged; success keeps the previous file as config.toml.bak.
func (m *Manager) SetPlanned(ctx context.Context, plan PlanFunc, expect []byte, authorize func(props []string) error) ([]string, error) {
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	before, after, st, props, err := m.planned(ctx, "set", plan, authorize)
	if err != nil {
		return nil, err
	}
	if expect != nil && !bytes.Equal(before, expect) {
		return nil, fmt.Errorf("%w since it was shown; run the command again to see the new difference", ErrDrifted)
	}
	if !bytes.Equal(after, before) {
		if err := atomicSave(m.fs, m.log, m.path, after); err != nil {
			m.log.Error("config: save failed", "component", "config", "err", err)
			return nil, fmt.Errorf("config: save %s: %w", m.name, err)
		}
	}
	m.warn(st)
	m.swap(st)
	return firstSeen(props), nil
}

// planned is the shared start of Preview and SetPlanned, under writeMu: the live file, plan's batch staged on
// it and the candidate validated.
func (m *Manager) planned(ctx context.Context, what string, plan PlanFunc, authorize func([]string) error) (before, after []byte, st *state, props []string, err error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("config: %s: %w", what, err)
	}
	sets, err := plan(m.Current())
	if err != nil {
		return nil, nil, nil, nil, err
	}
	switch {
	case len(sets) == 0:
		return nil, nil, nil, nil, ErrNoEntries
	case len(sets) > MaxSetEntries:
		return nil, nil, nil, nil, ErrTooManyEntries
	}
	batch, props, err := prepareSets(sets)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	raw, err := m.beginWrite(ctx, what, authorize, props)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	staged, err := m.stageSets(raw, batch, props)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	after, st, err = m.candidate(staged, props)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return raw, after, st, props, nil
}

// CheckAlias applies the alias rule of map entries (agents, providers, profiles): 1..63 lowercase letters,
// digits and single underscores, starting and ending with a letter or digit. A violation wraps ErrInvalidKey.
func CheckAlias(key string) error { return checkAlias(key) }
