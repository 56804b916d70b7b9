package config

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The errors of edits and reloads reach remote clients: they name the file by its base name, never the
// directory it lies in, and an entry's own problem once; LocalErrors gives the full path back to a local owner.
func TestEditErrorsNameFileNotPath(t *testing.T) {
	m, path := openManager(t, commentedConfig)
	dir := filepath.Dir(path)
	bad := json.RawMessage(`"read_only"`)

	_, err := m.Set(t.Context(), "risk_profiles.supervised.level", bad, nil)
	want := `config: risk_profiles.supervised.level: "read_only" is not accepted; use "readonly" (config.toml:`
	if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), dir) || !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("set: %v", err)
	}

	if err := os.WriteFile(path, []byte("[risk_profiles.x]\nlevel = \"read_only\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Reload(t.Context()); err == nil || strings.Contains(err.Error(), dir) || !strings.HasPrefix(err.Error(), "config: config.toml") {
		t.Fatalf("reload: %v", err)
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	_, err = m.Set(t.Context(), "agents.default.system_prompt", json.RawMessage(`"hi"`), nil)
	if err == nil || err.Error() != "config: read config.toml: open: no such file or directory" || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("set on a removed file: %v", err)
	}

	m.LocalErrors()
	_, err = m.Set(t.Context(), "agents.default.system_prompt", json.RawMessage(`"hi"`), nil)
	if err == nil || !strings.Contains(err.Error(), "config: read "+path+": ") {
		t.Fatalf("local set on a removed file: %v", err)
	}
}

// An entry error whose cause is not about its property alone keeps the cause's whole text.
func TestEntryErrorKeepsOtherProblems(t *testing.T) {
	ve := &ValidationError{File: "config.toml", Problems: []Problem{{Path: "a.b", Message: "bad", Line: 3}, {Path: "c", Message: "worse"}}}
	e := &EntryError{Index: 1, Prop: "a.b", Err: ve}
	if got, want := e.Error(), "config: sets[1] a.b: config.toml: 2 problem(s): a.b: bad (line 3); c: worse"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	fe := &FileError{File: "config.toml", Line: 4, Column: 2, Key: "a.b", Msg: "expected a string"}
	if got, want := (&EntryError{Prop: "a.b", Err: fe, Single: true}).Error(), "config: a.b: expected a string (config.toml:4:2)"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
