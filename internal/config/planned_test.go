package config

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"
)

// Preview stages a planned batch without writing or swapping; SetPlanned writes exactly what was previewed,
// keeps a .bak, and refuses a file changed since the preview.
func TestPreviewThenSetPlanned(t *testing.T) {
	t.Parallel()
	m, path := openManager(t, commentedConfig)
	ctx := context.Background()
	plan := func(cfg *Config) ([]SetEntry, error) {
		if _, ok := cfg.Agents["helper"]; ok {
			return nil, errors.New("exists")
		}
		return []SetEntry{{Prop: "agents.helper.model_provider", Value: json.RawMessage(`"echo.default"`)},
			{Prop: "agents.helper.risk_profile", Value: json.RawMessage(`"supervised"`)}}, nil
	}
	gen := m.Generation()
	pv, err := m.Preview(ctx, plan)
	if err != nil {
		t.Fatal(err)
	}
	if !pv.Changed() || string(pv.Before) != commentedConfig || m.Generation() != gen {
		t.Fatalf("preview: changed %v, before matches %v, generation %d→%d", pv.Changed(), string(pv.Before) == commentedConfig, gen, m.Generation())
	}
	if raw, _ := os.ReadFile(path); string(raw) != commentedConfig {
		t.Fatal("Preview wrote the file")
	}
	if _, err := os.Stat(path + ".bak"); !os.IsNotExist(err) {
		t.Fatal("Preview wrote a .bak")
	}

	// A file edited behind the preview is refused, untouched.
	edited := commentedConfig + "# edited\n"
	if err := os.WriteFile(path, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := m.SetPlanned(ctx, plan, pv.Before, nil); !errors.Is(err, ErrDrifted) {
		t.Fatalf("SetPlanned over an edited file: %v, want ErrDrifted", err)
	}
	if raw, _ := os.ReadFile(path); string(raw) != edited {
		t.Fatal("a refused SetPlanned wrote the file")
	}

	if err := os.WriteFile(path, []byte(commentedConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := m.SetPlanned(ctx, plan, pv.Before, nil); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if string(raw) != string(pv.After) {
		t.Fatalf("SetPlanned wrote something else than the preview:\n%s\nwant:\n%s", raw, pv.After)
	}
	if bak, _ := os.ReadFile(path + ".bak"); string(bak) != commentedConfig {
		t.Fatal("no .bak of the previous file")
	}
	if _, ok := m.Current().Agents["helper"]; !ok || m.Generation() == gen {
		t.Fatal("the live config was not swapped")
	}
	// The plan runs against the config in force: now it refuses, and its error comes back as is.
	if _, err := m.SetPlanned(ctx, plan, nil, nil); err == nil || err.Error() != "exists" {
		t.Fatalf("plan error: %v", err)
	}
}
