package gateway_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/zeroclaw-go/zeroclaw/internal/gateway"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// status hides the install's paths from a non-admin caller; this sweeps every other GET route the same way:
// a device paired with a profile holding every read grant (not admin) must not learn where the install lives.
func TestGatewayRestrictedReaderSeesNoInstallPath(t *testing.T) {
	t.Parallel()
	cfg := rpctest.GatewayConfig + `
[permission_profiles.reader]
grants = ["status:read", "health:read", "tui:read", "sessions:read", "files:read", "config:read", "memory:read",
  "cron:read", "heartbeat:read", "devices:read", "skills:read", "personality:read", "sops:read", "cost:read",
  "logs:read", "doctor:run"]
`
	d, g, code := rpctest.StartGateway(t, cfg)
	owner := rpctest.PairOnce(t, g, code)
	reader := rpctest.PairWithProfile(t, d, g, "reader")
	// doctor still reports every finding to the reader, its paths written as placeholders.
	full := g.Do("GET", "/api/doctor", nil, owner).Want(t, 200)
	redacted := g.Do("GET", "/api/doctor", nil, reader).Want(t, 200)
	fr, _ := full.Body["results"].([]any)
	rr, _ := redacted.Body["results"].([]any)
	if len(fr) == 0 || len(rr) != len(fr) || !strings.Contains(redacted.Body["results"].([]any)[0].(map[string]any)["message"].(string), "<data_dir>") {
		t.Errorf("doctor for a reader: %d findings (owner %d), want the same with <data_dir> placeholders: %.600s", len(rr), len(fr), redacted.Raw)
	}
	if !strings.Contains(string(full.Raw), filepath.Dir(d.ConfigDir)) {
		t.Errorf("the owner's doctor names no path: %.400s", full.Raw)
	}
	for _, r := range gateway.New(gateway.Options{}).Routes() {
		method, pattern, _ := strings.Cut(r, " ")
		if method != "GET" || strings.HasPrefix(pattern, "/ws/") || pattern == "/acp" || pattern == "/api/events" ||
			strings.HasPrefix(pattern, "/ui/") || strings.HasPrefix(pattern, "/_app/") || strings.HasPrefix(pattern, "wss:") {
			continue
		}
		path := pattern
		for strings.Contains(path, "{") {
			i := strings.Index(path, "{")
			j := strings.Index(path[i:], "}")
			path = path[:i] + "nope" + path[i+j+1:]
		}
		path = strings.TrimSuffix(path, "{$}") + matrixQuery[pattern]
		res := g.Do("GET", path, nil, reader)
		if strings.Contains(string(res.Raw), filepath.Dir(d.ConfigDir)) {
			t.Errorf("GET %s (%d) names the install %s to a restricted device: %.400s", path, res.Code, d.ConfigDir, res.Raw)
		}
	}
}

// status listed every live session's id to any device with status:read: a viewer learned the owner's
// session ids (and how many there are). A restricted device now sees only the sessions it may act on.
func TestGatewayStatusSessionIDsAreTheCallers(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayProfilesConfig+`
[permission_profiles.chatview]
grants = ["sessions:execute", "sessions:create", "sessions:read", "status:read"]
`)
	owner := rpctest.PairOnce(t, g, code)
	viewer := rpctest.PairWithProfile(t, d, g, "viewer")
	chatter := rpctest.PairWithProfile(t, d, g, "chatview")
	open := func(auth string) string { // a /ws/chat session stays live while its socket is open
		w := rpctest.DialWS(t, d.GatewayURL(t), "/ws/chat?agent=default", &websocket.DialOptions{HTTPHeader: rpctest.BearerHeader(auth)})
		sid, _ := w.Next()["session_id"].(string)
		w.Send(map[string]any{"type": "message", "content": "hi"})
		w.Until("done")
		return sid
	}
	ownerSid, chatterSid := open(owner), open(chatter)
	ids := func(auth string) []string {
		r := g.Do("GET", "/api/status", nil, auth).Want(t, 200)
		var out []string
		list, _ := r.Body["session_ids"].([]any)
		for _, v := range list {
			s, _ := v.(string)
			out = append(out, s)
		}
		if n, _ := r.Body["active_sessions"].(float64); int(n) != len(out) {
			t.Errorf("active_sessions %v with session_ids %q", r.Body["active_sessions"], out)
		}
		return out
	}
	if got := ids(owner); !slices.Contains(got, ownerSid) || !slices.Contains(got, chatterSid) {
		t.Fatalf("the owner's status lists %q, want both live sessions (nothing was tested)", got)
	}
	if got := ids(viewer); len(got) != 0 {
		t.Errorf("a viewer device's status lists %q", got)
	}
	if got := ids(chatter); !slices.Equal(got, []string{chatterSid}) {
		t.Errorf("a chatter device's status lists %q, want only its own session", got)
	}
}
