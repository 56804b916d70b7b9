package config

import (
	"encoding/json"
	"sync"
	"testing"
	"time"
)

// While Hold's fn runs, the config in force stays the one fn was given: a set that arrives meanwhile waits and
// takes effect after fn returns.
func TestHoldKeepsConfigFixed(t *testing.T) {
	m, _ := openManager(t, commentedConfig)
	var mu sync.Mutex
	var events []string
	note := func(e string) { mu.Lock(); events = append(events, e); mu.Unlock() }
	setDone := make(chan error, 1)
	err := m.Hold(t.Context(), func(cfg *Config) error {
		go func() {
			_, err := m.Set(t.Context(), "agents.default.system_prompt", json.RawMessage(`"changed"`), nil)
			note("set done")
			setDone <- err
		}()
		time.Sleep(50 * time.Millisecond) // room for the set to run, were it not held off
		if m.Current() != cfg || cfg.Agents["default"].SystemPrompt != "" {
			t.Error("the config changed under Hold")
		}
		note("fn done")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-setDone; err != nil {
		t.Fatal(err)
	}
	if events[0] != "fn done" || m.Current().Agents["default"].SystemPrompt != "changed" {
		t.Fatalf("events %v, prompt %q: the set must land after Hold", events, m.Current().Agents["default"].SystemPrompt)
	}
}
