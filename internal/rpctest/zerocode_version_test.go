package rpctest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// rpc.server_version makes initialize and status advertise another release, so zerocode 0.8.2–0.8.4 (which
// require their own) connect; it applies to the next initialize after a config/set, and a value that is not a
// release version is refused.
func TestZerocodeServerVersionSetting(t *testing.T) {
	d := Start(t, WithConfig(zerocodeConfig+"\n[rpc]\nserver_version = \"0.8.4\"\n"))
	c := &zc{Client: d.Dial(t), t: t}
	var ini zcInitialize
	c.decode("initialize", map[string]any{"protocol_version": 1}, &ini)
	var st zcStatus
	c.decode("status", map[string]any{}, &st)
	if ini.ServerVersion != "0.8.4" || st.ServerVersion != "0.8.4" {
		t.Fatalf("server_version: initialize %q, status %q; want the configured 0.8.4", ini.ServerVersion, st.ServerVersion)
	}
	c.call("config/set", map[string]any{"prop": "rpc.server_version", "value": ""})
	c.decode("initialize", map[string]any{"protocol_version": 1}, &ini)
	c.decode("status", map[string]any{}, &st)
	if ini.ServerVersion != api.ServerVersion || st.ServerVersion != api.ServerVersion {
		t.Fatalf("server_version after clearing the setting: %q, %q; want %s", ini.ServerVersion, st.ServerVersion, api.ServerVersion)
	}
	if _, werr := c.tryCall("config/set", map[string]any{"prop": "rpc.server_version", "value": "latest"}); werr == nil || werr.Code != -32602 {
		t.Fatalf("config/set rpc.server_version latest: %v, want -32602", werr)
	}
}

// A client that closes right after initialize with no other call (what zerocode 0.8.2–0.8.4 do on a
// server_version not theirs) is reported by doctor/run with the setting to change; a client that made a call is
// not.
func TestZerocodeRefusalDoctorHint(t *testing.T) {
	d := Start(t, WithConfig(zerocodeConfig))
	doctorHint := func(c *zc) *api.DiagResult {
		var res api.DoctorResult
		if err := json.Unmarshal(c.call("doctor/run", map[string]any{"offline": true}), &res); err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Results {
			if r.ID == "client-closed-after-initialize" {
				return &r
			}
		}
		return nil
	}
	busy := &zc{Client: d.Dial(t), t: t}
	busy.call("initialize", map[string]any{"protocol_version": 1})
	busy.call("status", map[string]any{})
	busy.Conn().Close()
	owner := &zc{Client: d.Dial(t), t: t}
	owner.call("initialize", map[string]any{"protocol_version": 1})
	time.Sleep(50 * time.Millisecond) // the daemon sees the close
	if h := doctorHint(owner); h != nil {
		t.Fatalf("a client that made a call is reported: %+v", h)
	}

	refusing := &zc{Client: d.Dial(t), t: t}
	refusing.call("initialize", map[string]any{"protocol_version": 1})
	refusing.Conn().Close()
	deadline := time.Now().Add(5 * time.Second)
	h := doctorHint(owner)
	for h == nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		h = doctorHint(owner)
	}
	if h == nil {
		t.Fatal("doctor/run does not report the connection closed right after initialize")
	}
	if h.Severity != "warn" || h.Path != "rpc.server_version" || !strings.Contains(h.Fix, "zeroclaw config set rpc.server_version") ||
		!strings.Contains(h.Message, "1 client connection(s)") || !strings.Contains(h.Message, api.ServerVersion) {
		t.Fatalf("doctor finding %+v", h)
	}
}
