package quickstart_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/quickstart"
	"github.com/zeroclaw-go/zeroclaw/internal/secrets"
)

// Security-matrix row (quickstart/apply): what a client types lands as data, never as TOML. Strings built to
// close a value and open a table ("\n[gateway]\n...") do not reach the gateway's settings; the api_key and the
// bot token are enc2: at rest and never in an answer; the file still opens with every value as typed.
func TestApplyHostileStringsStayValues(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, config.DefaultTOML(), 0o600); err != nil {
		t.Fatal(err)
	}
	box := secrets.New(filepath.Join(dir, ".secret_key"))
	m, err := config.Open(path, box, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := m.Current().Gateway
	inject := "x\"\n[gateway]\nhost = \"0.0.0.0\"\nrequire_pairing = false\n#"
	apiKey := "sk-SECRETVALUE-" + inject
	token := "123456:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA_SECRETTOKEN"
	sub := submission("balanced", "eve")
	sub.ModelProvider = api.Selector{Mode: api.SelectFresh, Value: raw(map[string]any{"provider_type": "openai", "alias": "evil",
		"model": "gpt'''\"]]", "fields": map[string]string{"api_key": apiKey, "uri": "http://127.0.0.1:1/v1"}})}
	sub.Channels = []api.Selector{{Mode: api.SelectFresh, Value: raw(map[string]any{"channel_type": "telegram", "alias": "tg",
		"fields": map[string]string{"bot_token": token}})}}
	sub.PeerGroups = []api.QuickstartPeerGroup{{Name: "pg", Channel: "telegram.tg", ExternalPeers: []string{inject, "@bob"}, Ignore: []string{"]]\n[agents.x]"}}}
	b := &quickstart.Builder{Config: m}
	// A submission that fails validation names the problem, not the secrets it carries.
	bad := *sub
	bad.ModelProvider = api.Selector{Mode: api.SelectFresh, Value: raw(map[string]any{"provider_type": "openai", "alias": "bad",
		"model": "m", "fields": map[string]string{"api_key": apiKey, "uri": "SECRETVALUE ://x"}})}
	bad.Channels = []api.Selector{{Mode: api.SelectFresh, Value: raw(map[string]any{"channel_type": "telegram", "alias": "tg",
		"fields": map[string]string{"bot_token": token + "!"}})}}
	vres, err := b.Validate(context.Background(), &bad)
	if err != nil || vres.Kind != api.QuickstartKindErrors || len(vres.Errors) == 0 {
		t.Fatalf("validate of a bad submission: %+v %v", vres, err)
	}
	if v, _ := json.Marshal(vres); strings.Contains(string(v), "SECRETTOKEN") || strings.Contains(string(v), "sk-SECRETVALUE") {
		t.Fatalf("a validation answer holds a secret: %s", v)
	}
	res, err := b.Apply(context.Background(), sub, nil, nil)
	if err != nil || res.Kind != api.QuickstartKindApplied {
		t.Fatalf("apply: %+v %v", res, err)
	}
	answer, _ := json.Marshal(res)
	if strings.Contains(string(answer), "SECRET") {
		t.Fatalf("the answer holds a secret: %s", answer)
	}
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(file), "SECRETVALUE") || strings.Contains(string(file), "SECRETTOKEN") {
		t.Fatalf("a secret is plaintext at rest:\n%s", file)
	}
	m2, err := config.Open(path, box, nil, nil)
	if err != nil {
		t.Fatalf("the written file does not open: %v\n%s", err, file)
	}
	c := m2.Current()
	if c.Gateway.Host != before.Host || c.Gateway.RequirePairing != before.RequirePairing {
		t.Fatalf("injected gateway settings took effect: host %q pairing %v", c.Gateway.Host, c.Gateway.RequirePairing)
	}
	if _, ok := c.Agents["x"]; ok {
		t.Fatal("an injected [agents.x] table appeared")
	}
	p := c.Providers.Models[config.FamilyOpenAI]["evil"]
	if p.Model != "gpt'''\"]]" || p.APIKey != apiKey {
		t.Fatalf("provider round trip: model %q key %q", p.Model, p.APIKey)
	}
	if g := c.PeerGroups["pg"]; len(g.ExternalPeers) != 2 || g.ExternalPeers[0] != inject || g.Ignore[0] != "]]\n[agents.x]" {
		t.Fatalf("peer group round trip: %+v", g)
	}
	if c.Channels.Telegram["tg"].BotToken != token {
		t.Fatalf("bot token round trip %q", c.Channels.Telegram["tg"].BotToken)
	}
}
