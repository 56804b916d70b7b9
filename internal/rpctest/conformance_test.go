package rpctest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Cases of upstream's newer transport conformance suite that we failed (issue 23), each driven against the real
// daemon.

// promptGen sends session/prompt as a notification carrying client_turn_generation, as zerocode does.
func (c *zc) promptGen(sid, prompt string, gen uint64) {
	c.t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "session/prompt",
		"params": map[string]any{"session_id": sid, "prompt": prompt, "client_turn_generation": gen}})
	c.Send(string(b))
}

// zcTurnCompleteGen is turn_complete with the generation upstream's conformance suite reads back.
type zcTurnCompleteGen struct {
	Outcome    string `json:"outcome" zc:"enum=completed|cancelled|failed"`
	Generation uint64 `json:"client_turn_generation"`
}

// lastTurnComplete reads frames until a turn_complete for sid and returns its raw params.
func lastTurnComplete(t *testing.T, c *Client, sid string) json.RawMessage {
	t.Helper()
	for {
		f := c.Frame()
		if f.Method != "session/update" {
			continue
		}
		var head zcUpdateHead
		if err := json.Unmarshal(f.Params, &head); err != nil {
			t.Fatal(err)
		}
		if head.Type == "turn_complete" && head.SessionID == sid {
			return f.Params
		}
	}
}

// turn_complete echoes the prompt's client_turn_generation, for a turn that ran and for a prompt to an unknown
// session; a prompt without one gets none.
func TestConformanceTurnGeneration(t *testing.T) {
	d := Start(t, WithConfig(zerocodeConfig))
	c := &zc{Client: d.Dial(t), t: t}
	c.call("initialize", map[string]any{"protocol_version": 1})
	var sn zcSessionNew
	c.decode("session/new", map[string]any{"agent_alias": "default"}, &sn)

	for _, gen := range []uint64{7, 8} {
		c.promptGen(sn.SessionID, "hello", gen)
		var done zcTurnCompleteGen
		raw := lastTurnComplete(t, c.Client, sn.SessionID)
		if err := decodeZC(raw, &done); err != nil || done.Generation != gen || done.Outcome != "completed" {
			t.Fatalf("turn_complete %s (%v), want client_turn_generation %d", raw, err, gen)
		}
	}
	c.promptGen("no-such-session", "hello", 9)
	var done zcTurnCompleteGen
	if raw := lastTurnComplete(t, c.Client, "no-such-session"); decodeZC(raw, &done) != nil || done.Generation != 9 || done.Outcome != "failed" {
		t.Fatalf("turn_complete of an unknown session %s, want client_turn_generation 9", raw)
	}
	c.notifyPrompt(sn.SessionID, "no generation")
	var bare map[string]any
	_ = json.Unmarshal(lastTurnComplete(t, c.Client, sn.SessionID), &bare)
	if _, ok := bare["client_turn_generation"]; ok {
		t.Errorf("turn_complete of a prompt without a generation carries one: %v", bare)
	}
}

// session/cancel on an idle session answers -32000 every time, also right after a turn_complete: the turn stops
// being cancellable before its turn_complete goes out.
func TestConformanceCancelIdle(t *testing.T) {
	d := Start(t, WithConfig(zerocodeConfig))
	c := &zc{Client: d.Dial(t), t: t}
	c.call("initialize", map[string]any{"protocol_version": 1})
	var sn zcSessionNew
	c.decode("session/new", map[string]any{"agent_alias": "default"}, &sn)
	if _, werr := c.tryCall("session/cancel", map[string]any{"session_id": sn.SessionID}); werr == nil || werr.Code != -32000 {
		t.Fatalf("cancel before any turn: %v, want -32000", werr)
	}
	for i := range 400 {
		c.notifyPrompt(sn.SessionID, fmt.Sprintf("turn %d", i))
		lastTurnComplete(t, c.Client, sn.SessionID)
		res, werr := c.tryCall("session/cancel", map[string]any{"session_id": sn.SessionID})
		if werr == nil || werr.Code != -32000 {
			t.Fatalf("turn %d: session/cancel right after turn_complete answered %s %v, want -32000", i, res, werr)
		}
	}
}

// A roster user's principal_id is user:<name>; the operator stays shared-operator.
func TestConformancePrincipalID(t *testing.T) {
	d := Start(t, asUser("status:read"))
	c := &zc{Client: d.Dial(t), t: t}
	var ini struct {
		PrincipalID string `json:"principal_id"`
	}
	c.decode("initialize", map[string]any{"protocol_version": 1}, &ini)
	if ini.PrincipalID != "user:alice" {
		t.Fatalf("principal_id = %q, want user:alice", ini.PrincipalID)
	}
	op := Start(t)
	o := &zc{Client: op.Dial(t), t: t}
	o.decode("initialize", map[string]any{"protocol_version": 1}, &ini)
	if ini.PrincipalID != "shared-operator" {
		t.Fatalf("operator principal_id = %q", ini.PrincipalID)
	}
}

// An initialize presenting an auth_token that is not a paired token is refused -32010 (it used to become the
// shared operator); the connection stays un-initialized, and an initialize without a token still binds.
func TestConformanceUnpairedAuthToken(t *testing.T) {
	d := Start(t)
	c := &zc{Client: d.Dial(t), t: t}
	for _, tok := range []string{"zc_not_a_paired_token", ""} {
		_, werr := c.tryCall("initialize", map[string]any{"protocol_version": 1, "auth_token": tok})
		if werr == nil || werr.Code != -32010 {
			t.Fatalf("initialize with auth_token %q: %v, want -32010", tok, werr)
		}
	}
	if _, werr := c.tryCall("status", map[string]any{}); werr == nil || werr.Code != -32010 {
		t.Fatalf("status after a refused initialize: %v, want -32010", werr)
	}
	c.call("initialize", map[string]any{"protocol_version": 1})
	c.call("status", map[string]any{})
}

// A paired token presented as auth_token binds the connection as that token's device, with its profile's grants
// (the explicit credential wins over the socket's uid); once revoked, the next call is refused -32010.
func TestConformancePairedAuthToken(t *testing.T) {
	d, g, _ := StartGateway(t, GatewayProfilesConfig)
	viewer := strings.TrimPrefix(PairWithProfile(t, d, g, "viewer"), "Authorization: Bearer ")
	c := &zc{Client: d.Dial(t), t: t}
	var ini struct {
		PrincipalID string `json:"principal_id"`
	}
	c.decode("initialize", map[string]any{"protocol_version": 1, "auth_token": viewer}, &ini)
	if !strings.HasPrefix(ini.PrincipalID, "device:") {
		t.Fatalf("principal_id = %q, want the viewer's device", ini.PrincipalID)
	}
	c.call("status", map[string]any{})
	if _, werr := c.tryCall("session/list", map[string]any{}); werr == nil || werr.Code != -32012 {
		t.Fatalf("session/list as the viewer device: %v, want -32012", werr)
	}
	owner := &zc{Client: d.Dial(t), t: t}
	owner.call("initialize", map[string]any{"protocol_version": 1})
	var devs struct {
		Devices []struct {
			ID string `json:"id"`
		} `json:"devices"`
	}
	owner.decode("devices/list", map[string]any{}, &devs)
	for _, dev := range devs.Devices {
		owner.call("devices/revoke", map[string]any{"id": dev.ID})
	}
	if _, werr := c.tryCall("status", map[string]any{}); werr == nil || werr.Code != -32010 {
		t.Fatalf("status after the token was revoked: %v, want -32010", werr)
	}
}

// Upstream's newer grants-as-table profile form loads beside ours and grants the same methods: a user whose
// profile says grants = {system = ["read"], sessions = ["read"]} may call status and session/list, nothing
// else; config/list and config/set keep working on such a file.
func TestConformanceGrantsTable(t *testing.T) {
	cfg := fmt.Sprintf("%s\n[permission_profiles.viewer]\ngrants = { system = [\"read\"], sessions = [\"read\"] }\n\n[users.alice]\nuid = %d\npermission_profiles = [\"viewer\"]\n",
		baseConfig, os.Getuid())
	d := Start(t, WithConfig(cfg))
	c := &zc{Client: d.Dial(t), t: t}
	c.call("initialize", map[string]any{"protocol_version": 1})
	c.call("status", map[string]any{})
	c.call("session/list", map[string]any{})
	if _, werr := c.tryCall("config/get", map[string]any{"prop": "gateway.port"}); werr == nil || werr.Code != -32012 {
		t.Fatalf("config/get as a sessions/system viewer: %v, want -32012", werr)
	}

	// The operator edits and lists a file in that form; the table stays as written.
	op := Start(t, WithConfig(baseConfig+"\n[permission_profiles.viewer]\ngrants = { system = [\"read\"], sessions = [\"read\"] }\n"))
	o := &zc{Client: op.Dial(t), t: t}
	o.call("initialize", map[string]any{"protocol_version": 1})
	o.call("config/set", map[string]any{"prop": "gateway.port", "value": 43999})
	var cl zcConfigList
	o.decode("config/list", map[string]any{}, &cl)
	raw, err := os.ReadFile(filepath.Join(op.ConfigDir, "config.toml"))
	if err != nil || !strings.Contains(string(raw), `grants = { system = ["read"], sessions = ["read"] }`) || !strings.Contains(string(raw), "43999") {
		t.Fatalf("config.toml: %v\n%s", err, raw)
	}
}
