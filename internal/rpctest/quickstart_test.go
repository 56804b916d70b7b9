package rpctest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/channel/telegram/tgfake"
)

// qsSubmission is a complete submission creating agent name on a fresh echo provider alias.
func qsSubmission(alias, name string, files ...map[string]any) map[string]any {
	if files == nil {
		files = []map[string]any{}
	}
	return map[string]any{"submission": map[string]any{
		"model_provider":  map[string]any{"mode": "fresh", "value": map[string]any{"provider_type": "echo", "alias": alias, "model": "echo"}},
		"risk_profile":    map[string]any{"mode": "fresh", "value": "balanced"},
		"runtime_profile": map[string]any{"mode": "fresh", "value": "unbounded"},
		"memory":          map[string]any{"mode": "fresh", "value": "sqlite"},
		"channels":        []any{},
		"agent":           map[string]any{"name": name, "system_prompt": "", "personality_file": nil, "personality_files": files},
	}}
}

// Who may drive the quickstart: reading and validating need config:read; apply needs config:update covering
// every property it writes, checked under the write lock; a refused apply changes nothing.
func TestQuickstartGrants(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		grants  []string
		read    bool
		applyOK bool
	}{
		{"status only", []string{"status:read"}, false, false},
		{"read only", []string{"config:read"}, true, false},
		{"agents scope only", []string{"config:read", "config:update:agents.**"}, true, false},
		{"full update", []string{"config:read", "config:update"}, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := Start(t, asUser(tc.grants...))
			cfgPath := filepath.Join(d.ConfigDir, "config.toml")
			before, _ := os.ReadFile(cfgPath)
			u := d.Dial(t)
			u.Initialize()
			if !tc.read {
				data := mustError(t, call(t, u, 1, "quickstart/state", map[string]any{}), -32012)
				if data["grant"] != "config:read" {
					t.Fatalf("data %v", data)
				}
				mustError(t, call(t, u, 2, "quickstart/validate", qsSubmission("qs", "helper")), -32012)
			} else {
				mustResult(t, call(t, u, 1, "quickstart/state", map[string]any{}))
				if r := mustResult(t, call(t, u, 2, "quickstart/validate", qsSubmission("qs", "helper"))); r["kind"] != "ok" {
					t.Fatalf("validate: %v", r)
				}
			}
			m := call(t, u, 3, "quickstart/apply", qsSubmission("qs", "helper"))
			after, _ := os.ReadFile(cfgPath)
			if tc.applyOK {
				if r := mustResult(t, m); r["kind"] != "applied" {
					t.Fatalf("apply: %v", r)
				}
				if !strings.Contains(string(after), "[agents.helper]") {
					t.Fatalf("applied, but the file lacks the agent:\n%s", after)
				}
				return
			}
			mustError(t, m, -32012)
			if string(after) != string(before) {
				t.Fatalf("a refused apply changed config.toml:\n%s", after)
			}
		})
	}
}

// Identity files staged by a submission are written into the new agent's workspace after the config is saved;
// one over upstream's 20 000-character limit, or one that is not an identity file, refuses the whole apply.
func TestQuickstartPersonalityFiles(t *testing.T) {
	t.Parallel()
	d := Start(t)
	cfgPath := filepath.Join(d.ConfigDir, "config.toml")
	before, _ := os.ReadFile(cfgPath)
	c := d.Dial(t)
	c.Initialize()
	r := mustResult(t, call(t, c, 1, "quickstart/apply", qsSubmission("qs", "helper",
		map[string]any{"filename": "SOUL.md", "content": "calm"},
		map[string]any{"filename": "../../escape.md", "content": "x"})))
	if r["kind"] != "errors" || !strings.Contains(r["errors"].([]any)[0].(map[string]any)["message"].(string), "is not an identity file") {
		t.Fatalf("apply with a bad filename: %v", r)
	}
	r = mustResult(t, call(t, c, 2, "quickstart/apply", qsSubmission("qs", "helper",
		map[string]any{"filename": "SOUL.md", "content": strings.Repeat("é", 20001)})))
	if r["kind"] != "errors" || !strings.Contains(r["errors"].([]any)[0].(map[string]any)["message"].(string), "20000 char limit") {
		t.Fatalf("apply with a long file: %v", r)
	}
	if after, _ := os.ReadFile(cfgPath); string(after) != string(before) {
		t.Fatalf("a refused apply changed config.toml:\n%s", after)
	}
	r = mustResult(t, call(t, c, 3, "quickstart/apply", qsSubmission("qs", "helper",
		map[string]any{"filename": "SOUL.md", "content": "calm and precise"})))
	if r["kind"] != "applied" {
		t.Fatalf("apply: %v", r)
	}
	got := mustResult(t, call(t, c, 4, "personality/get", map[string]any{"agent": "helper", "filename": "SOUL.md"}))
	if got["content"] != "calm and precise" {
		t.Fatalf("SOUL.md: %v", got)
	}
}

// zerocode's Quickstart pane decodes these results into its mirror types (apps/zerocode/src/client.rs):
// every field it requires is present with the JSON type it expects, and every enum value is one it knows.
func TestQuickstartZerocodeShapes(t *testing.T) {
	t.Parallel()
	d := Start(t)
	c := d.Dial(t)
	c.Initialize()
	st := mustResult(t, call(t, c, 1, "quickstart/state", map[string]any{}))
	for _, k := range []string{"agents", "risk_profiles", "runtime_profiles", "model_providers", "channels", "storage"} {
		if _, ok := st[k].([]any); !ok {
			t.Fatalf("state.%s is %T, want an array", k, st[k])
		}
	}
	if _, ok := st["quickstart_completed"].(bool); !ok {
		t.Fatalf("state.quickstart_completed: %v", st["quickstart_completed"])
	}
	for _, k := range []string{"model_provider_types", "channel_types"} {
		for _, o := range st[k].([]any) {
			row := o.(map[string]any)
			if _, ok := row["kind"].(string); !ok {
				t.Fatalf("%s row %v lacks kind", k, row)
			}
			if _, ok := row["display_name"].(string); !ok {
				t.Fatalf("%s row %v lacks display_name", k, row)
			}
		}
	}
	for _, k := range []string{"risk_presets", "runtime_presets"} {
		rows := st[k].([]any)
		if len(rows) == 0 {
			t.Fatalf("no %s", k)
		}
		for _, o := range rows {
			row := o.(map[string]any)
			for _, f := range []string{"preset_name", "label", "help"} {
				if _, ok := row[f].(string); !ok {
					t.Fatalf("%s row %v lacks %s", k, row, f)
				}
			}
		}
	}
	kinds := []string{"string", "bool", "integer", "float", "enum", "string_array", "object_array", "object"}
	for _, typ := range []string{"openai", "anthropic", "ollama", "echo"} {
		fr := mustResult(t, call(t, c, 2, "quickstart/fields", map[string]any{"section": "model_provider", "type_key": typ}))
		for _, o := range fr["fields"].([]any) {
			f := o.(map[string]any)
			if !slices.Contains(kinds, f["kind"].(string)) {
				t.Fatalf("%s field %v: kind zerocode does not know", typ, f)
			}
			for _, k := range []string{"key", "label", "help"} {
				if _, ok := f[k].(string); !ok {
					t.Fatalf("%s field %v lacks %s", typ, f, k)
				}
			}
			for _, k := range []string{"is_secret", "required"} {
				if _, ok := f[k].(bool); !ok {
					t.Fatalf("%s field %v lacks %s", typ, f, k)
				}
			}
			for _, k := range []string{"enum_variants", "default"} {
				if _, ok := f[k]; !ok {
					t.Fatalf("%s field %v lacks %s (null when unset)", typ, f, k)
				}
			}
			if f["is_secret"] == true && f["default"] != nil {
				t.Fatalf("secret field %v has a default", f)
			}
		}
	}
	steps := []string{"model_provider", "risk_profile", "runtime_profile", "memory", "channels", "peer_groups", "agent"}
	bad := qsSubmission("qs", "Bad Name")
	bad["submission"].(map[string]any)["channels"] = []any{map[string]any{"mode": "fresh", "value": map[string]any{"channel_type": "telegram", "alias": "t"}}}
	v := mustResult(t, call(t, c, 3, "quickstart/validate", bad))
	if v["kind"] != "errors" {
		t.Fatalf("validate: %v", v)
	}
	for _, o := range v["errors"].([]any) {
		e := o.(map[string]any)
		if !slices.Contains(steps, e["step"].(string)) {
			t.Fatalf("error %v: a step zerocode does not know", e)
		}
		if _, ok := e["field"].(string); !ok {
			t.Fatalf("error %v lacks field", e)
		}
	}
	a := mustResult(t, call(t, c, 4, "quickstart/apply", qsSubmission("qs", "helper")))
	agent, _ := a["agent"].(map[string]any)
	if a["kind"] != "applied" || agent == nil || a["daemon_restarted"] == nil {
		t.Fatalf("apply: %v", a)
	}
	for _, k := range []string{"alias", "model_provider", "risk_profile", "runtime_profile", "memory_backend"} {
		if _, ok := agent[k].(string); !ok {
			t.Fatalf("agent.%s: %v", k, agent)
		}
	}
	if _, ok := agent["channels"].([]any); !ok {
		t.Fatalf("agent.channels: %v", agent)
	}
	mustResult(t, call(t, c, 5, "quickstart/dismiss", map[string]any{"run_id": "r1", "surface": "tui", "last_step": nil}))
}

// A submission with a fresh Telegram channel and a peer group: the channel is created enabled with its token
// (stored enc2:, never shown), the agent binds it, the peer group lets the listed peer talk to that agent; the
// channel then counts as assigned, and binding it to a second agent is refused. A malformed token is refused.
// The bot never reaches api.telegram.org: the first daemon runs on the JSONL session backend (an in-memory
// override), where no channel starts; the channel's api_base_url is then set to the loopback Bot API fake, and
// a second daemon on the same install polls that fake and answers the listed peer there.
func TestQuickstartTelegramChannel(t *testing.T) {
	t.Parallel()
	token := "123456789:AAH" + strings.Repeat("x", 32)
	fake := tgfake.Start(token)
	defer fake.Close()
	d := Start(t, WithEnv("ZEROCLAW_channels__session_backend=jsonl"))
	cfgPath := filepath.Join(d.ConfigDir, "config.toml")
	c := d.Dial(t)
	c.Initialize()
	sub := qsSubmission("qs", "helper")
	s := sub["submission"].(map[string]any)
	s["channels"] = []any{map[string]any{"mode": "fresh", "value": map[string]any{"channel_type": "telegram", "alias": "main",
		"fields": map[string]any{"bot_token": "not-a-token"}}}}
	r := mustResult(t, call(t, c, 1, "quickstart/apply", sub))
	if r["kind"] != "errors" || !strings.Contains(string(mustJSON(t, r)), "bot token") {
		t.Fatalf("a malformed token: %v", r)
	}
	s["channels"] = []any{map[string]any{"mode": "fresh", "value": map[string]any{"channel_type": "telegram", "alias": "main",
		"fields": map[string]any{"bot_token": token}}}}
	s["peer_groups"] = []any{map[string]any{"name": "telegram_main_default", "channel": "telegram.main", "external_peers": []string{"@alice"}}}
	r = mustResult(t, call(t, c, 2, "quickstart/apply", sub))
	if r["kind"] != "applied" || !strings.Contains(string(mustJSON(t, r)), `"channels":["telegram.main"]`) {
		t.Fatalf("apply: %v", r)
	}
	raw, _ := os.ReadFile(cfgPath)
	text := string(raw)
	for _, want := range []string{"[channels.telegram.main]", "enabled = true", `bot_token = "enc2:`, `channels = ["telegram.main"]`,
		"[peer_groups.telegram_main_default]", `external_peers = ["@alice"]`, `agents = ["helper"]`} {
		if !strings.Contains(text, want) {
			t.Fatalf("config.toml lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, token) {
		t.Fatal("the bot token is stored in clear")
	}
	st := mustResult(t, call(t, c, 3, "quickstart/state", map[string]any{}))
	if !strings.Contains(string(mustJSON(t, st["channels"])), "telegram.main") || len(st["unassigned_channels"].([]any)) != 0 {
		t.Fatalf("state: channels %v unassigned %v", st["channels"], st["unassigned_channels"])
	}
	again := qsSubmission("qs2", "other")
	again["submission"].(map[string]any)["channels"] = []any{map[string]any{"mode": "existing", "value": "telegram.main"}}
	r = mustResult(t, call(t, c, 4, "quickstart/validate", again))
	if r["kind"] != "errors" || !strings.Contains(string(mustJSON(t, r)), "already bound to agent `helper`") {
		t.Fatalf("binding a bound channel: %v", r)
	}
	mustResult(t, call(t, c, 5, "config/set", map[string]any{"prop": "channels.telegram.main.api_base_url", "value": fake.URL()}))
	if st := mustResult(t, call(t, c, 6, "status", map[string]any{})); st["channels"] != nil {
		t.Fatalf("a channel runs on the JSONL backend: %v", st["channels"])
	}
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}

	StartOn(t, d.ConfigDir)
	fake.SendText(7, "alice", "hello from telegram")
	deadline := time.Now().Add(30 * time.Second)
	for len(fake.Sent()) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no answer on the fake after %d polls", fake.Polls())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if m := fake.Sent()[0]; m.ChatID != 7 || !strings.Contains(m.Text, "hello from telegram") || fake.Polls() == 0 {
		t.Fatalf("the answer: %+v after %d polls", m, fake.Polls())
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
