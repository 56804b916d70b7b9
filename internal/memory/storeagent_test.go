package memory

import (
	"errors"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// A store without agent on an install with no agent named default goes to the only enabled agent, whose recall
// then finds it; with several enabled agents it is ErrInvalid naming them (it used to land under a phantom
// "default" no agent recalls). An install with a default agent keeps storing there.
func TestStoreWithoutAgentPicksTheAgent(t *testing.T) {
	ctx := t.Context()
	only := openManager(t, t.TempDir(), testConfig(func(c *config.Config) {
		c.Agents["helper"] = c.Agents["default"]
		delete(c.Agents, "default")
		off := false
		other := c.Agents["other"]
		other.Enabled = &off
		c.Agents["other"] = other
	}))
	if err := only.Store(ctx, "", "fav", "The favourite colour is teal", "", ""); err != nil {
		t.Fatal(err)
	}
	h, err := only.For(ctx, "helper")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := h.Recall(ctx, "teal", 5, "", "", ""); err != nil || len(got) != 1 {
		t.Fatalf("the only enabled agent recalls %+v, %v; want the stored memory", got, err)
	}

	several := openManager(t, t.TempDir(), testConfig(func(c *config.Config) {
		c.Agents["helper"] = c.Agents["default"]
		delete(c.Agents, "default")
	}))
	err = several.Store(ctx, "", "fav", "teal", "", "")
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "helper, other") {
		t.Fatalf("store without agent among several: %v, want ErrInvalid listing helper, other", err)
	}

	def := openManager(t, t.TempDir(), testConfig(nil))
	if err := def.Store(ctx, "", "fav", "teal", "", ""); err != nil {
		t.Fatal(err)
	}
	if e, err := def.Get(ctx, "default", "fav"); err != nil || e.Content != "teal" {
		t.Fatalf("default agent: %+v %v", e, err)
	}
}
