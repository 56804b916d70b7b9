package workspace

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// Personality names files only from EditableFiles (checked before the agent) and agents only from config.
func TestPersonalityBounds(t *testing.T) {
	root := t.TempDir()
	cfg := config.Default()
	p := NewPersonality(func() *config.Config { return cfg }, root)
	names, err := p.Files("")
	if err != nil || len(names) != len(EditableFiles) || names[0].Exists {
		t.Fatalf("names: %+v %v", names, err)
	}
	if _, err := p.Get("", "../config.toml"); !errors.Is(err, ErrNotEditable) {
		t.Fatalf("path as name: %v", err)
	}
	if _, err := p.Put(" ", "SOUL.md", "x"); !errors.Is(err, ErrUnknownAgent) {
		t.Fatalf("no agent: %v", err)
	}
	if _, err := p.Files("../../etc"); !errors.Is(err, ErrUnknownAgent) {
		t.Fatalf("unknown agent: %v", err)
	}
	if _, err := p.Put("default", "SOUL.md", "Be kind."); err != nil {
		t.Fatal(err)
	}
	c, err := p.Get("default", "SOUL.md")
	if err != nil || !c.Exists || c.Text != "Be kind." {
		t.Fatalf("get: %+v %v", c, err)
	}
	if got := filepath.Join(root, "agents", "default", "workspace"); len(List(got)) == 0 || !List(got)[0].Exists {
		t.Fatalf("file not in the agent's workspace")
	}
	if ts := p.Templates(""); len(ts) == 0 {
		t.Fatal("no templates")
	}
}
