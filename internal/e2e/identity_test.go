package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The real binary: the first turn seeds the default agent's identity files and sends them to the model; a
// SOUL.md edited on disk and a skill added to an opted-in bundle are in the very next request.
func TestIdentityAndSkillsReachTheModel(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var systems []string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Role, Content string } `json:"messages"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req)
		mu.Lock()
		for _, m := range req.Messages {
			if m.Role == "system" {
				systems = append(systems, m.Content)
			}
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, sseChunk("ok")+"data: [DONE]\n\n")
	}))
	defer backend.Close()

	h, root := homeWithOpenAI(t, "fake", backend.URL)
	cfg, err := os.ReadFile(filepath.Join(root, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg = []byte(strings.Replace(string(cfg), "risk_profile = \"supervised\"\n", "risk_profile = \"supervised\"\nskill_bundles = [\"team\"]\n", 1) +
		"\n[skill_bundles.team]\n")
	if err := os.WriteFile(filepath.Join(root, "config.toml"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	d := start(t, env(h), "daemon")
	waitSocket(t, d, agentSock(h))

	last := func() string {
		mu.Lock()
		defer mu.Unlock()
		if len(systems) == 0 {
			t.Fatal("the model got no system message")
		}
		return systems[len(systems)-1]
	}
	runOK(t, env(h), "", "agent", "-m", "hello")
	if s := last(); !strings.Contains(s, "### SOUL.md") || !strings.Contains(s, "You are **default**") || strings.Contains(s, "Available Skills") {
		t.Fatalf("first system message:\n%s", s)
	}
	if b, err := os.ReadFile(filepath.Join(agentWorkspace(h), "IDENTITY.md")); err != nil || !strings.Contains(string(b), "**Name:** default") {
		t.Fatalf("IDENTITY.md not seeded: %q %v", b, err)
	}

	if err := os.WriteFile(filepath.Join(agentWorkspace(h), "SOUL.md"), []byte("You are Marvin, and you are tired.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	skill := filepath.Join(root, "shared", "skills", "team", "haiku", "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(skill), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(skill, []byte("---\nname: haiku\ndescription: Answers in haiku.\n---\nFive, seven, five.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	runOK(t, env(h), "", "agent", "-m", "hello again")
	s := last()
	if !strings.Contains(s, "You are Marvin, and you are tired.") || strings.Contains(s, "You are **default**") ||
		!strings.Contains(s, "<name>haiku</name>") || !strings.Contains(s, "<instruction>Five, seven, five.</instruction>") {
		t.Fatalf("second system message:\n%s", s)
	}
	runOK(t, env(h), "", "stop")
	if c := d.wait(t, 10*time.Second); c != 0 {
		t.Fatalf("daemon exit code %d", c)
	}
}
