package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// Its no-cors POST is sent, refused (415: a text/plain body), and unreadable besides (the gateway's
// Cross-Origin-Resource-Policy: same-origin makes the browser fail it: "blocked").
//
// dashboardAttack is a page of another origin (another port of 127.0.0.1) in the browser that holds the
// dashboard's token: it tries to read the dashboard's data, change its config, frame its pages and read their
// storage, and open its chat socket. It leaves what it got in window.__out.
const dashboardAttack = `<!doctype html><html><head><title>attacker</title></head><body><script>
(async () => {
  const gw = /*GW*/null, out = {};
  const body = '{"prop":"gateway.request_timeout_secs","value":7}';
  try { const r = await fetch(gw + '/api/sessions'); out.read = 'read ' + r.status + ' ' + await r.text(); } catch (e) { out.read = 'blocked'; }
  try { const r = await fetch(gw + '/api/config/prop', {method: 'PUT', headers: {'Content-Type': 'application/json'}, body}); out.put = 'read ' + r.status; } catch (e) { out.put = 'blocked'; }
  try { await fetch(gw + '/api/devices/' + /*DEV*/null + '/token/rotate', {method: 'POST', mode: 'no-cors', headers: {'Content-Type': 'text/plain'}, body: '{}'}); out.plain = 'sent'; } catch (e) { out.plain = 'blocked'; }
  const f = document.createElement('iframe');
  await new Promise(res => { f.onload = res; f.onerror = res; f.src = gw + '/ui/config'; document.body.appendChild(f); });
  try { out.frame = String(f.contentWindow.document.body.textContent); } catch (e) { out.frame = 'denied'; }
  try { out.frameStorage = String(f.contentWindow.localStorage.getItem('zeroclaw.token')); } catch (e) { out.frameStorage = 'denied'; }
  out.ownStorage = String(localStorage.getItem('zeroclaw.token'));
  await new Promise(res => {
    const ws = new WebSocket(gw.replace('http:', 'ws:') + '/ws/chat?agent=default', ['zeroclaw.v1']);
    ws.onopen = () => { out.ws = 'open'; res(); }; ws.onerror = () => { out.ws = 'refused'; res(); };
  });
  window.__out = out; document.title = 'done';
})();
</script></body></html>`

func dashboardCrossOrigin(t *testing.T, b *browser, base, token, deviceID, cfgPath string) {
	t.Helper()
	page := strings.Replace(dashboardAttack, "/*GW*/null", jsString(base), 1)
	page = strings.Replace(page, "/*DEV*/null", jsString(deviceID), 1)
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page))
	}))
	defer attacker.Close()
	before, _ := os.ReadFile(cfgPath)
	assetsBefore, apiBefore := len(b.requests(base+"/ui/assets/")), len(b.requests(base+"/api/"))

	b.open(attacker.URL + "/")
	b.waitJS("the attacker's page finishes", "document.title === 'done'")
	var out map[string]string
	b.eval("window.__out", &out)
	raw, _ := json.Marshal(out)
	if strings.Contains(string(raw), token) {
		t.Fatalf("the attacker's page got the token: %s", raw)
	}
	want := map[string]string{"read": "blocked", "put": "blocked", "plain": "blocked", "frame": "denied", "frameStorage": "denied", "ownStorage": "null", "ws": "refused"}
	for k, v := range want {
		if out[k] != v {
			t.Errorf("%s: the page got %q, want %q (all: %s)", k, out[k], v, raw)
		}
	}
	// The framed page never ran: none of its scripts was even fetched (frame-ancestors 'none', X-Frame-Options).
	if n := len(b.requests(base + "/ui/assets/")); n != assetsBefore {
		t.Errorf("the framed dashboard loaded %d files", n-assetsBefore)
	}
	// Each of its calls that the browser sent was refused by the gateway (a preflighted one is never sent).
	sent := 0
	for _, r := range b.requests(base + "/api/")[apiBefore:] {
		if r.Method == "OPTIONS" || r.Status == 0 && strings.Contains(r.Failed, "Preflight") {
			continue // never sent: the browser asked first and was not allowed
		}
		sent++
		if r.Status != http.StatusUnauthorized && r.Status != http.StatusForbidden && r.Status != http.StatusUnsupportedMediaType {
			t.Errorf("the gateway answered the attacker's %s", r)
		}
	}
	if sent == 0 {
		t.Error("the attacker's page sent nothing: the test saw none of its requests")
	}
	if after, _ := os.ReadFile(cfgPath); string(after) != string(before) {
		t.Fatalf("the attacker changed config.toml:\n%s", after)
	}
	// The dashboard itself still holds its token and works.
	b.open(base + "/ui/overview")
	b.waitJS("the dashboard still works", "document.documentElement.dataset.loaded === 'overview'")
	if got := b.str("localStorage.getItem('zeroclaw.token')"); got != token {
		t.Fatal("the dashboard lost its token to the attack")
	}
}
