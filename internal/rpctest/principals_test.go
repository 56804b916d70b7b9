package rpctest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// call sends one request on c and returns the decoded response frame, skipping notifications.
func call(t *testing.T, c *Client, id int, method string, params any) map[string]any {
	t.Helper()
	c.Request(method, params, id)
	for {
		m := c.Next()
		if _, isNote := m["method"]; isNote {
			continue
		}
		if m["id"] != float64(id) {
			t.Fatalf("response id %v, want %d", m["id"], id)
		}
		return m
	}
}

func mustResult(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	r, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("expected a result, got %v", m)
	}
	return r
}

func mustError(t *testing.T, m map[string]any, code int) map[string]any {
	t.Helper()
	e, ok := m["error"].(map[string]any)
	if !ok || e["code"] != float64(code) {
		t.Fatalf("expected error %d, got %v", code, m)
	}
	data, _ := e["data"].(map[string]any)
	return data
}

// asUser returns a config in which this test process's uid is the plain user "alice" with the given grants
// (every connection the test opens then acts as alice, not as the admin operator).
func asUser(grants ...string) Option {
	g, _ := json.Marshal(grants)
	return WithConfig(fmt.Sprintf("%s\n[permission_profiles.limited]\ngrants = %s\n\n[users.alice]\nuid = %d\npermission_profiles = [\"limited\"]\n",
		baseConfig, g, os.Getuid()))
}

// shutdown is admin-only: a plain user gets -32012 naming the grant and the daemon keeps running.
func TestShutdownNeedsAdmin(t *testing.T) {
	t.Parallel()
	d := Start(t, asUser("status:read"))
	u := d.Dial(t)
	u.Initialize()
	data := mustError(t, call(t, u, 1, "shutdown", map[string]any{}), -32012)
	if data["grant"] != "admin" {
		t.Fatalf("data %v, want grant admin", data)
	}
	mustResult(t, call(t, u, 2, "status", map[string]any{}))
	mustError(t, call(t, u, 3, "tui/list", map[string]any{}), -32012)
}

// A principal allowed to update only some paths gets -32012 for a batch with one forbidden path, with that
// entry's index, even though earlier paths were allowed; nothing changes, on disk or live.
func TestSetManyForbiddenPathNamesIndex(t *testing.T) {
	t.Parallel()
	d := Start(t, asUser("config:read", "config:update:agents.*.system_prompt"))
	cfgPath := filepath.Join(d.ConfigDir, "config.toml")
	before, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	u := d.Dial(t)
	u.Initialize()
	data := mustError(t, call(t, u, 1, "config/set-many", map[string]any{"sets": []map[string]any{
		{"prop": "agents.default.system_prompt", "value": "allowed"},
		{"prop": "agents.default.risk_profile", "value": "full"},
	}}), -32012)
	if data["index"] != float64(1) || data["prop"] != "agents.default.risk_profile" {
		t.Fatalf("data %v, want index 1 and the forbidden prop", data)
	}
	after, _ := os.ReadFile(cfgPath)
	if string(after) != string(before) {
		t.Fatalf("config.toml changed by a refused batch:\n%s", after)
	}
	got := mustResult(t, call(t, u, 2, "config/get", map[string]any{"prop": "agents.default.system_prompt"}))
	if got["value"] != "" {
		t.Fatalf("live config changed: %v", got)
	}
	// The allowed path alone goes through.
	mustResult(t, call(t, u, 3, "config/set", map[string]any{"prop": "agents.default.system_prompt", "value": "allowed"}))
}

// Without config:update at all, writes are refused naming the grant.
func TestConfigUpdateGrantRequired(t *testing.T) {
	t.Parallel()
	d := Start(t, asUser("config:read"))
	u := d.Dial(t)
	u.Initialize()
	data := mustError(t, call(t, u, 1, "config/set", map[string]any{"prop": "agents.default.system_prompt", "value": "x"}), -32012)
	if data["grant"] != "config:update" {
		t.Fatalf("data %v", data)
	}
	mustResult(t, call(t, u, 2, "config/get", map[string]any{"prop": "agents.default.system_prompt"}))
}

// Authority is resolved again for every request, from the config in force: a grant revoked after the client
// initialized refuses its next batch, on the same connection.
func TestRevokedGrantRefusesNextBatch(t *testing.T) {
	t.Parallel()
	d := Start(t, asUser("config:read", "config:update"))
	u := d.Dial(t)
	u.Initialize()
	mustResult(t, call(t, u, 1, "config/set", map[string]any{"prop": "agents.default.system_prompt", "value": "one"}))
	// alice narrows her own profile; the change is live for her very next request.
	mustResult(t, call(t, u, 2, "config/set", map[string]any{"prop": "permission_profiles.limited.grants",
		"value": []string{"config:read", "config:update:users.**"}}))
	data := mustError(t, call(t, u, 3, "config/set-many", map[string]any{"sets": []map[string]any{
		{"prop": "agents.default.system_prompt", "value": "two"},
	}}), -32012)
	if data["index"] != float64(0) {
		t.Fatalf("data %v", data)
	}
	got := mustResult(t, call(t, u, 4, "config/get", map[string]any{"prop": "agents.default.system_prompt"}))
	if got["value"] != "one" {
		t.Fatalf("value %v, want one", got["value"])
	}
}

// With trust_daemon_uid = false, a uid that is not a configured user (here: the daemon's own) is refused at
// initialize with -32010 and stays un-initialized.
func TestUntrustedUIDRefused(t *testing.T) {
	t.Parallel()
	d := Start(t, WithConfig(baseConfig+"\n[security]\ntrust_daemon_uid = false\n"))
	c := d.Dial(t)
	mustError(t, call(t, c, 1, "initialize", map[string]any{"protocol_version": 1}), -32010)
	mustError(t, call(t, c, 2, "status", map[string]any{}), -32010)
}

// A grant with an extra scope is not the grant: holding "sessions:delete:only-mine" (a form protocol.md §8 does
// not define) must not let a user delete sessions. Only config:update takes a scope.
func TestScopedGrantDoesNotWidenToMethod(t *testing.T) {
	t.Parallel()
	d := Start(t, asUser("sessions:create", "sessions:delete:only-mine", "sessions:read:x", "config:read:agents.**"))
	u := d.Dial(t)
	u.Initialize()
	mustResult(t, call(t, u, 1, "session/new", map[string]any{"session_id": "mine"}))
	data := mustError(t, call(t, u, 2, "session/delete", map[string]any{"session_id": "mine"}), -32012)
	if data["grant"] != "sessions:delete" {
		t.Fatalf("data %v, want grant sessions:delete", data)
	}
	if data := mustError(t, call(t, u, 3, "session/list", map[string]any{}), -32012); data["grant"] != "sessions:read" {
		t.Fatalf("data %v, want grant sessions:read", data)
	}
	if data := mustError(t, call(t, u, 4, "config/get", map[string]any{"prop": "agents"}), -32012); data["grant"] != "config:read" {
		t.Fatalf("data %v, want grant config:read", data)
	}
}
