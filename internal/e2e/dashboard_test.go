package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The built-in web dashboard (issue 27) in a real headless Chromium against the real daemon: the browser
// pairs with the code the daemon printed, chats a streamed turn whose tool call it approves (and whose hostile
// Markdown it renders inert), finds the session by full-text search, watches a log line arrive live, reads the
// cost totals of a seeded ledger off the chart, edits the config and sees the validation error beside the
// field, is usable at a phone's width; a page of another origin in the same browser can neither read nor drive
// it; revoking the browser's device makes its pages lose access, and logging out revokes. Every check is on
// the DOM and on the daemon's state (config.toml, the device registry, the agent's workspace), never pixels.

// hostileAnswer is the model's answer: Markdown with raw HTML, a script, a javascript: link and a good link.
const hostileAnswer = "**done** and `ok`\n\n<img src=x onerror=\"document.title='pwned'\"> <script>document.title='pwned'</script>\n\n" +
	"[bad](javascript:document.title='pwned') [good](https://example.com/ok)\n\n```\n<b>not bold</b>\n```\n"

// ledgerLines are the seeded cost records: $1.25 on 2026-01-05 (m1) and $0.50 on 2026-01-06 (m2).
var ledgerLines = []map[string]any{
	{"id": "c1", "session_id": "s1", "agent_alias": "default", "usage": map[string]any{"model": "m1", "input_tokens": 100, "output_tokens": 50, "total_tokens": 150, "cost_usd": 1.25, "timestamp": "2026-01-05T10:00:00Z"}},
	{"id": "c2", "session_id": "s1", "agent_alias": "default", "usage": map[string]any{"model": "m2", "input_tokens": 10, "output_tokens": 5, "total_tokens": 15, "cost_usd": 0.5, "timestamp": "2026-01-06T10:00:00Z"}},
}

var dashBanner = regexp.MustCompile(`Gateway pairing code: (\d{6})\n  pair with: curl -X POST -H 'X-Pairing-Code: \d{6}' (http://[0-9.:]+)/pair`)

func TestDashboardInBrowser(t *testing.T) {
	var calls atomic.Int32
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		switch calls.Add(1) {
		case 1:
			fmt.Fprint(w, sseToolCall("echo approved-by-browser > marker.txt"))
		case 2:
			for _, part := range strings.SplitAfter(hostileAnswer, " ") {
				fmt.Fprint(w, sseChunk(part))
			}
			fmt.Fprint(w, "data: [DONE]\n\n")
		case 3: // a turn that runs until the page cancels it
			fmt.Fprint(w, sseChunk("working on it"))
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(60 * time.Second):
			}
		default:
			fmt.Fprint(w, sseChunk("another answer")+"data: [DONE]\n\n")
		}
	}))
	defer backend.Close()

	h, root := homeWithOpenAI(t, "fake", backend.URL)
	cfgPath := filepath.Join(root, "config.toml")
	writeConfigSecret(t, cfgPath)
	state := filepath.Join(root, "data", "state")
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	var ledger []byte
	for _, l := range ledgerLines {
		b, _ := json.Marshal(l)
		ledger = append(append(ledger, b...), '\n')
	}
	if err := os.WriteFile(filepath.Join(state, "costs.jsonl"), ledger, 0o600); err != nil {
		t.Fatal(err)
	}

	d := start(t, env(h), "daemon")
	sock := agentSock(h)
	waitSocket(t, d, sock)
	var m []string
	eventually(t, 10*time.Second, "the pairing banner", func() bool { m = dashBanner.FindStringSubmatch(d.stderr.String()); return m != nil })
	code, base := m[1], m[2]
	shots := screenshotDir(t)

	b := startBrowser(t, "")
	b.viewport(1200, 900, false)
	var token, deviceID, sessionID string

	t.Run("pair", func(t *testing.T) {
		b.t = t
		b.open(base + "/ui/pair")
		b.waitJS("the pair page says it is not paired", "document.documentElement.dataset.auth !== 'lost' && document.getElementById('pair-form')")
		b.setValue("pair-code", code)
		b.submit("pair-form")
		b.waitJS("paired", "document.getElementById('pair-device')")
		token = b.str("localStorage.getItem('zeroclaw.token')")
		deviceID = b.str("localStorage.getItem('zeroclaw.device')")
		if len(token) < 20 || deviceID == "" || b.str("document.getElementById('pair-device').textContent") != deviceID {
			t.Fatalf("after pairing: token %q, device %q", token, deviceID)
		}
		if href := b.str("location.href"); strings.Contains(href, token) || strings.Contains(href, code) {
			t.Fatalf("the token or code is in the URL: %s", href)
		}
		if devs := socketDevices(t, sock); !slices.Contains(devs, deviceID) {
			t.Fatalf("the daemon's devices %v lack the browser's %s", devs, deviceID)
		}
		b.screenshot(shots, "pair")
	})
	if token == "" {
		t.FailNow()
	}

	t.Run("chat", func(t *testing.T) {
		b.t = t
		b.open(base + "/ui/chat")
		b.waitJS("the chat connects", "!document.getElementById('chat-send').disabled")
		sessionID = b.str("document.documentElement.dataset.session")
		b.setValue("chat-input", "zebrafruit please write the marker")
		b.submit("chat-form")
		b.waitJS("the approval request", "document.querySelector('.approval button[data-decision=approve]')")
		if got := b.str("document.querySelector('.approval pre').textContent"); !strings.Contains(got, "approved-by-browser") {
			t.Fatalf("the approval shows %q, not the command", got)
		}
		if _, err := os.Stat(filepath.Join(agentWorkspace(h), "marker.txt")); !os.IsNotExist(err) {
			t.Fatalf("the command ran before it was approved (%v)", err)
		}
		b.screenshot(shots, "chat-approval")
		b.click(".approval button[data-decision=approve]")
		b.waitJS("the turn is done", "document.querySelector('article.msg.assistant[data-done=true]')")
		if data, err := os.ReadFile(filepath.Join(agentWorkspace(h), "marker.txt")); err != nil || !strings.Contains(string(data), "approved-by-browser") {
			t.Fatalf("the approved command did not run: %q %v", data, err)
		}
		if b.str("document.querySelector('details.tool').dataset.tool") != "shell" {
			t.Fatal("the tool call is not shown")
		}
		var dom struct {
			Strong, Good, Code, Title string
			Imgs, Scripts, Bad, Bold  int
		}
		b.eval(`(() => { const log = document.getElementById('chat-log'), a = log.querySelector('article.msg.assistant[data-done=true] .body');
			return { strong: (a.querySelector('strong')||{}).textContent || '', good: (a.querySelector('a[href="https://example.com/ok"]')||{}).rel || '',
			code: (a.querySelector('pre code')||{}).textContent || '', title: document.title,
			imgs: log.querySelectorAll('img').length, scripts: log.querySelectorAll('script').length,
			bad: log.querySelectorAll('a[href^="javascript"]').length, bold: log.querySelectorAll('b').length }; })()`, &dom)
		if dom.Strong != "done" || !strings.Contains(dom.Good, "noopener") || !strings.Contains(dom.Code, "<b>not bold</b>") {
			t.Fatalf("the Markdown is not rendered: %+v", dom)
		}
		if dom.Imgs != 0 || dom.Scripts != 0 || dom.Bad != 0 || dom.Bold != 0 || strings.Contains(dom.Title, "pwned") {
			t.Fatalf("the model's raw HTML became markup: %+v", dom)
		}
		if !strings.Contains(b.str("document.getElementById('chat-log').textContent"), "<img src=x") {
			t.Fatal("the raw HTML is not shown as text")
		}
		b.screenshot(shots, "chat")

		// A turn that does not end by itself: Cancel turn aborts it.
		b.setValue("chat-input", "take your time")
		b.submit("chat-form")
		b.waitJS("the slow turn streams", "[...document.querySelectorAll('article.msg.assistant .body')].some(e => e.textContent.includes('working on it')) && !document.getElementById('chat-cancel').disabled")
		b.click("#chat-cancel")
		b.waitJS("the turn is cancelled", "document.querySelector('#chat-log [data-aborted=true]') && document.getElementById('chat-cancel').disabled")
	})

	t.Run("sessions", func(t *testing.T) {
		b.t = t
		b.open(base + "/ui/sessions")
		b.waitJS("the sessions list", "document.documentElement.dataset.loaded === 'sessions'")
		b.setValue("sessions-q", "zebrafruit")
		b.submit("sessions-search")
		b.waitJS("the search finds the chat's session", "document.querySelector('#sessions-table tr[data-session="+jsString(sessionID)+"]')")
		if n := b.str("String(document.querySelectorAll('#sessions-table tbody tr[data-session]').length)"); n != "1" {
			t.Fatalf("the search lists %s sessions, want 1", n)
		}
		if !strings.Contains(b.str("location.search"), "q=zebrafruit") {
			t.Fatal("the search is not in the page's URL")
		}
		b.click("#sessions-table tr[data-session] button")
		b.waitJS("the transcript", "document.querySelectorAll('#transcript article').length >= 2")
		b.screenshot(shots, "sessions")
		// Delete the session from its row: it is gone from the page and from the daemon.
		if ids := gatewaySessions(t, base, token); !slices.Contains(ids, sessionID) {
			t.Fatalf("the daemon does not list the chat's session %s: %v", sessionID, ids)
		}
		b.eval("window.confirm = () => true", nil)
		b.click("#sessions-table tr[data-session=" + jsString(sessionID) + "] button.danger")
		b.waitJS("the row goes", "!document.querySelector('#sessions-table tr[data-session="+jsString(sessionID)+"]')")
		if ids := gatewaySessions(t, base, token); slices.Contains(ids, sessionID) {
			t.Fatalf("the deleted session %s is still listed by the daemon: %v", sessionID, ids)
		}
		b.setValue("sessions-q", "nosuchwordanywhere")
		b.submit("sessions-search")
		b.waitJS("no match", "document.querySelectorAll('#sessions-table tbody tr[data-session]').length === 0 && document.querySelector('#sessions-table td.empty')")
	})

	t.Run("logs", func(t *testing.T) {
		b.t = t
		b.open(base + "/ui/logs")
		b.waitJS("the event stream opens", "document.documentElement.dataset.stream === 'open'")
		// Another device pairs while the page watches: its token is written to the config, whose "config changed"
		// event reaches the page (the stream is the log hub's: it needs no persistence).
		out, errOut, rc := run(t, env(h), "", "pair", "code")
		if rc != 0 {
			t.Fatalf("pair code: %d %s", rc, errOut)
		}
		gw := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 10 * time.Second}
		req, _ := http.NewRequest("POST", base+"/pair", nil)
		req.Header.Set("X-Pairing-Code", strings.TrimSpace(out))
		res, err := gw.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("POST /pair: %d", res.StatusCode)
		}
		memStore(t, base, token, "dash-live-marker")
		b.waitJS("the pairing's log line arrives live", "[...document.querySelectorAll('#logs-list li[data-live=true]')].some(li => li.textContent.includes('config changed'))")
		// Paused, a new event is held, not shown; resumed, it is shown.
		b.click("#logs-pause")
		shown := b.str("String(document.querySelectorAll('#logs-list li').length)")
		gatewayPut(t, base, token, "gateway.request_timeout_secs", 31)
		b.waitJS("the event is held while paused", "/Paused: [1-9]/.test(document.getElementById('logs-status').textContent)")
		if now := b.str("String(document.querySelectorAll('#logs-list li').length)"); now != shown {
			t.Fatalf("paused, the list went from %s to %s lines", shown, now)
		}
		b.click("#logs-pause")
		b.waitJS("resumed, the held event is shown", "document.querySelectorAll('#logs-list li').length > "+shown)
		n := b.str("String(document.querySelectorAll('#logs-list li').length)")
		b.setValue("logs-filter", "no-such-text-in-any-event")
		if vis := b.str("String([...document.querySelectorAll('#logs-list li')].filter(li => !li.hidden).length)"); vis != "0" {
			t.Fatalf("the filter leaves %s of %s lines visible", vis, n)
		}
		b.setValue("logs-filter", "")
		b.screenshot(shots, "logs")
	})

	t.Run("costs", func(t *testing.T) {
		b.t = t
		b.open(base + "/ui/costs")
		b.waitJS("the costs page", "document.documentElement.dataset.loaded === 'costs'")
		if got := b.str("document.getElementById('cost-total').textContent"); got != "$1.7500" {
			t.Fatalf("total %q, want $1.7500", got)
		}
		for sel, want := range map[string]string{
			`#day-svg g[data-label="2026-01-05"]`: "1.250000", `#day-svg g[data-label="2026-01-06"]`: "0.500000",
			`#model-svg g[data-label="m1"]`: "1.250000", `#model-svg g[data-label="m2"]`: "0.500000",
			`#agent-svg g[data-label="default"]`: "1.750000",
		} {
			if got := b.str("document.querySelector(" + jsString(sel) + ").dataset.value"); got != want {
				t.Fatalf("%s: %s, want %s", sel, got, want)
			}
		}
		// The budgets: the monthly one set here, the daily one the config's; each shows how much of it the
		// daemon's spend (daily_cost_usd, monthly_cost_usd) uses.
		gatewayPut(t, base, token, "cost.monthly_limit_usd", 4)
		b.open(base + "/ui/costs")
		b.waitJS("the budget", "document.documentElement.dataset.loaded === 'costs' && document.getElementById('budget-Monthly')")
		var got struct {
			Meter, Want, Label, Daily, DailyWant string
		}
		b.eval(`(async () => { const c = await ZC.api('GET', '/api/cost'); const m = document.getElementById('budget-Monthly');
			const cfg = await ZC.api('GET', '/api/config/list?prefix=cost');
			const dl = parseFloat(((cfg.entries || []).find(e => e.path === 'cost.daily_limit_usd') || {}).value);
			const d = document.getElementById('budget-Daily');
			return { meter: m.getAttribute('value'), want: Math.min(100, 100 * (Number(c.monthly_cost_usd) || 0) / 4).toFixed(1),
			label: document.querySelector('label[for=budget-Monthly]').textContent,
			daily: d ? d.getAttribute('value') : 'none', dailyWant: dl > 0 ? Math.min(100, 100 * (Number(c.daily_cost_usd) || 0) / dl).toFixed(1) : 'none' }; })()`, &got)
		if got.Meter != got.Want || !strings.Contains(got.Label, "$4.0000") || !strings.Contains(got.Label, got.Want+"% used") {
			t.Fatalf("the monthly budget reads %+v", got)
		}
		if got.Daily != got.DailyWant {
			t.Fatalf("the daily budget reads %q, want %q", got.Daily, got.DailyWant)
		}
		b.screenshot(shots, "costs")
	})

	t.Run("config", func(t *testing.T) {
		b.t = t
		before, _ := os.ReadFile(cfgPath)
		b.open(base + "/ui/config")
		b.waitJS("the config page", "document.documentElement.dataset.loaded === 'config'")
		text := b.str("document.body.textContent")
		if strings.Contains(text, configSecret) || !strings.Contains(text, "secret, set") {
			t.Fatal("the provider's api_key is not masked on the config page")
		}
		b.setValue("config-prop", "gateway.request_timeout_secs")
		b.setValue("config-value", "soon")
		b.submit("config-edit")
		b.waitJS("the validation error", "!document.getElementById('config-error').hidden")
		if msg := b.str("document.getElementById('config-error').textContent"); msg == "" ||
			b.str("document.getElementById('config-value').getAttribute('aria-invalid')") != "true" {
			t.Fatalf("the error is not shown beside the field: %q", msg)
		}
		if after, _ := os.ReadFile(cfgPath); string(after) != string(before) {
			t.Fatalf("a refused value changed config.toml:\n%s", after)
		}
		b.screenshot(shots, "config-error")
		b.setValue("config-value", "45")
		b.submit("config-edit")
		b.waitJS("the value is set", "document.getElementById('config-result').textContent.startsWith('Set')")
		if after, _ := os.ReadFile(cfgPath); !regexp.MustCompile(`(?m)^request_timeout_secs = 45$`).Match(after) {
			t.Fatalf("config.toml after the edit:\n%s", after)
		}
	})

	t.Run("pages", func(t *testing.T) {
		b.t = t
		for _, p := range []string{"overview", "approvals", "cron", "memory", "doctor", "devices", "agents", "sops", "mcp", "channels"} {
			b.open(base + "/ui/" + p)
			b.waitJS(p+" renders", "document.querySelector('main').textContent.length > 40 && document.documentElement.dataset.auth !== 'lost'")
			time.Sleep(300 * time.Millisecond) // let its calls land before the picture (not asserted on)
			if e := b.str("document.getElementById('page-error').hidden ? '' : document.getElementById('page-error').textContent"); e != "" {
				t.Errorf("%s shows an error: %s", p, e)
			}
			b.screenshot(shots, p)
		}
		// Every field of every page has a label, and every control is reachable from the keyboard.
		for _, p := range []string{"pair", "chat", "sessions", "logs", "costs", "cron", "memory", "doctor", "devices", "config", "agents", "approvals", "overview"} {
			b.open(base + "/ui/" + p)
			var unlabeled []string
			b.eval(`[...document.querySelectorAll('input, select, textarea')].filter(e => e.labels.length === 0 && !e.getAttribute('aria-label')).map(e => e.id || e.outerHTML.slice(0, 60))`, &unlabeled)
			var unfocusable []string
			b.eval(`[...document.querySelectorAll('a, button, input, select, textarea')].filter(e => e.tabIndex < 0).map(e => e.id || e.outerHTML.slice(0, 60))`, &unfocusable)
			if len(unlabeled) > 0 || len(unfocusable) > 0 {
				t.Errorf("%s: fields without a label %v, controls out of the tab order %v", p, unlabeled, unfocusable)
			}
		}
		// The devices page makes a new pairing code.
		b.open(base + "/ui/devices")
		b.waitJS("the devices page", "document.documentElement.dataset.loaded === 'devices'")
		b.click("#devices-code")
		b.waitJS("a new pairing code", "/\\d{6}/.test(document.getElementById('devices-newcode').textContent)")
		// The memory page stores an entry typed into its form.
		b.open(base + "/ui/memory")
		b.waitJS("the memory page", "document.getElementById('memory-list').children.length > 0")
		b.setValue("memory-key", "typed-in-browser")
		b.setValue("memory-content", "stored from the dashboard")
		b.submit("memory-store")
		b.waitJS("the stored entry is listed", "document.querySelector('#memory-list [data-key=\"typed-in-browser\"]')")
		// Search finds it by its content, and not the other entry; Edit fills the form with it.
		b.setValue("memory-q", "stored from the dashboard")
		b.submit("memory-search")
		b.waitJS("the search's result", "document.querySelector('#memory-list [data-key=\"typed-in-browser\"]') && !document.querySelector('#memory-list [data-key=\"dash-live-marker\"]')")
		b.click(`#memory-list [data-key="typed-in-browser"] button:not(.danger)`)
		if got := b.str("document.getElementById('memory-key').value + '|' + document.getElementById('memory-content').value"); got != "typed-in-browser|stored from the dashboard" {
			t.Fatalf("Edit filled the form with %q", got)
		}
		b.open(base + "/ui/memory")
		b.waitJS("the memory entry", "document.querySelector('#memory-list [data-key=\"dash-live-marker\"]')")
		b.eval("window.confirm = () => true", nil)
		b.click(`#memory-list [data-key="dash-live-marker"] button.danger`)
		b.waitJS("the entry is forgotten", "!document.querySelector('#memory-list [data-key=\"dash-live-marker\"]')")
	})

	t.Run("phone", func(t *testing.T) {
		b.t = t
		b.viewport(390, 844, true)
		defer b.viewport(1200, 900, false)
		for _, p := range []string{"chat", "sessions", "costs", "config"} {
			b.open(base + "/ui/" + p)
			b.waitJS(p+" at a phone's width", "document.readyState === 'complete'")
			var over bool
			b.eval("document.documentElement.scrollWidth > window.innerWidth + 1", &over)
			if over {
				t.Errorf("%s scrolls sideways at 390px", p)
			}
			b.screenshot(shots, "phone-"+p)
		}
	})

	t.Run("cross-origin", func(t *testing.T) { b.t = t; dashboardCrossOrigin(t, b, base, token, deviceID, cfgPath) })

	t.Run("revoke", func(t *testing.T) {
		b.t = t
		b.open(base + "/ui/devices")
		b.waitJS("the devices page", "document.documentElement.dataset.loaded === 'devices'")
		b.screenshot(shots, "devices")
		// The owner revokes the browser's device from a terminal: the page loses access on its next call.
		c := dialRPC(t, sock)
		c.Initialize()
		if res := c.Call("devices/revoke", map[string]any{"id": deviceID}, 2); res["error"] != nil {
			t.Fatalf("devices/revoke: %v", res["error"])
		}
		b.open(base + "/ui/sessions")
		b.waitJS("the page loses access", "document.documentElement.dataset.auth === 'lost' && !document.getElementById('auth-lost').hidden")
		if n := b.str("String(document.querySelectorAll('#sessions-table tbody tr').length)"); n != "0" {
			t.Fatalf("a revoked browser still lists %s rows", n)
		}
		b.screenshot(shots, "revoked")
	})

	t.Run("logout", func(t *testing.T) {
		b.t = t
		out, errOut, rc := run(t, env(h), "", "pair", "code")
		if rc != 0 {
			t.Fatalf("pair code: %d %s", rc, errOut)
		}
		b.open(base + "/ui/pair")
		b.setValue("pair-code", strings.TrimSpace(out))
		b.submit("pair-form")
		b.waitJS("paired again", "document.getElementById('pair-device')")
		again := b.str("localStorage.getItem('zeroclaw.device')")
		b.open(base + "/ui/overview")
		b.waitJS("the logout button", "!document.getElementById('logout').hidden")
		b.click("#logout")
		b.waitJS("logged out", "location.pathname === '/ui/pair' && !localStorage.getItem('zeroclaw.token')")
		if devs := socketDevices(t, sock); slices.Contains(devs, again) {
			t.Fatalf("logout left device %s paired: %v", again, devs)
		}
	})
}

const configSecret = "sk-dashboard-secret-4242"

// writeConfigSecret gives the provider an api_key, which the config page must never show.
func writeConfigSecret(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(data), "model = \"m\"\n", "model = \"m\"\napi_key = \""+configSecret+"\"\n", 1)
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// memStore stores a memory entry over the gateway with token.
func memStore(t *testing.T, base, token, key string) {
	t.Helper()
	gw := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 10 * time.Second}
	req, _ := http.NewRequest("POST", base+"/api/memory", strings.NewReader(`{"key":"`+key+`","content":"x"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := gw.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("POST /api/memory: %d", res.StatusCode)
	}
}

// gatewayPut sets a config property over the gateway with token.
func gatewayPut(t *testing.T, base, token, prop string, value any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"prop": prop, "value": value})
	gw := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 10 * time.Second}
	req, _ := http.NewRequest("PUT", base+"/api/config/prop", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := gw.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("PUT /api/config/prop %s: %d", prop, res.StatusCode)
	}
}

// gatewaySessions is the ids GET /api/sessions lists for token.
func gatewaySessions(t *testing.T, base, token string) []string {
	t.Helper()
	gw := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 10 * time.Second}
	req, _ := http.NewRequest("GET", base+"/api/sessions", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := gw.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Sessions []struct {
			SessionID string `json:"session_id"`
		} `json:"sessions"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || res.StatusCode != 200 {
		t.Fatalf("GET /api/sessions: %d %v", res.StatusCode, err)
	}
	var ids []string
	for _, s := range body.Sessions {
		ids = append(ids, s.SessionID)
	}
	return ids
}

// socketDevices is the daemon's device ids over its socket.
func socketDevices(t *testing.T, sock string) []string {
	t.Helper()
	c := dialRPC(t, sock)
	c.Initialize()
	res, ok := c.Call("devices/list", map[string]any{}, 2)["result"].(map[string]any)
	if !ok {
		t.Fatal("devices/list failed")
	}
	var ids []string
	for _, d := range res["devices"].([]any) {
		ids = append(ids, d.(map[string]any)["id"].(string))
	}
	return ids
}
