package rpctest

import (
	"os"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// An error a client is sent names what was wrong, never where the daemon's install lies: a remote gateway
// client must not learn the layout from a refused config write or a failed upload. A config problem names the
// file relative to the config dir, with its line (config.toml:11), once.
func TestWireErrorsNameNoServerPath(t *testing.T) {
	t.Parallel()
	d := Start(t)
	c := dialRC(t, d, "")
	noPath := func(what string, werr *wireError, roots ...string) {
		t.Helper()
		if werr == nil {
			t.Fatalf("%s: no error", what)
		}
		for _, r := range append(roots, d.ConfigDir) {
			if strings.Contains(werr.Message, r) {
				t.Errorf("%s: message %q names the server path %s", what, werr.Message, r)
			}
		}
		if strings.Count(werr.Message, "risk_profiles.supervised.level") > 1 || strings.Contains(werr.Message, "problem(s)") {
			t.Errorf("%s: message %q repeats itself", what, werr.Message)
		}
	}

	_, werr := c.call(api.MethodConfigSet, map[string]any{"prop": "risk_profiles.supervised.level", "value": "read_only"})
	noPath("config/set", werr)
	wantErr(t, "config/set", werr, -32602, `config: risk_profiles.supervised.level: "read_only" is not accepted`, "(config.toml:")

	_, werr = c.call(api.MethodConfigSetMany, map[string]any{"sets": []map[string]any{
		{"prop": "agents.default.system_prompt", "value": "fine"},
		{"prop": "risk_profiles.supervised.level", "value": "read_only"},
	}})
	noPath("config/set_many", werr)
	wantErr(t, "config/set_many", werr, -32602, `config: sets[1] risk_profiles.supervised.level: "read_only" is not accepted`, "(config.toml:")

	// A store failure: the agent's workspace is no directory, so the file cannot be written under it.
	s := c.newSession(api.SessionNewParams{SessionID: "att"})
	if err := os.RemoveAll(s.WorkspaceDir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.WorkspaceDir, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, werr = c.attach("att", map[string]any{"data_b64": b64([]byte("notes")), "filename": "n.txt"})
	noPath("file/attach", werr, s.WorkspaceDir)
}
