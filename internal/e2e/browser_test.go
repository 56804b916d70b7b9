package e2e

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The browser proofs (issue 20, item 2): a real headless Chromium loads an attacker's page that tries to drive
// the gateway of a real daemon, and every attempt is refused with the daemon left as it was. Two attackers:
//
//   - TestBrowserCrossOriginCannotDriveGateway: a page from another origin on loopback (another port of
//     127.0.0.1) that fetch()es the pairing code and the admin routes, POSTs text/plain, urlencoded and
//     multipart forms into iframes, and opens WebSockets to /ws/chat and /acp.
//   - TestBrowserDNSRebindingCannotDriveGateway: a page whose own origin is http://rebind.test:PORT, PORT being
//     the gateway's, whose later requests to that same origin reach the gateway, as after a DNS rebinding.
//
// Each attempt's outcome is seen three ways: what the page could read (it reports everything to the attacker's
// collector, which must never see the pairing code or a token), what the gateway answered (the DevTools
// protocol's Network events show every status, including those the page may not read, and that each request
// was really sent), and the daemon's state before and after (still running with the same pid, config.toml
// byte-identical, the same devices, the owner's token still valid, the pending pairing code unchanged, and no
// reload: config/reload's generation has moved by exactly the one reload the test itself asks for).

//go:embed testdata/attack.html
var attackPage string

// pageAttempt is one thing the attacker's page tries (testdata/attack.html runs them in order).
type pageAttempt struct {
	Name    string            `json:"name"`
	Kind    string            `json:"kind"` // fetch, form, ws or sandboxed-fetch
	Method  string            `json:"method,omitempty"`
	Path    string            `json:"path"`
	Mode    string            `json:"mode,omitempty"`    // fetch's mode: cors (default) or no-cors
	Ctype   string            `json:"ctype,omitempty"`   // fetch's Content-Type
	Body    *string           `json:"body,omitempty"`    // fetch's body
	Auth    bool              `json:"auth,omitempty"`    // send a token the page stole, if it stole one
	Pair    bool              `json:"pair,omitempty"`    // send X-Pairing-Code with a code the page stole
	Enctype string            `json:"enctype,omitempty"` // form's enctype
	Fields  map[string]string `json:"fields,omitempty"`  // form's fields
	// Protocols are a WebSocket's subprotocols, as the gateway's own clients offer them; with Auth the page adds
	// "bearer.<token>".
	Protocols []string `json:"protocols,omitempty"`

	// Want is the status the gateway must answer (0 for a preflighted attempt, which is never sent).
	Want int `json:"-"`

	// outOfProcess: the attempt runs in a frame of its own process, whose network events the DevTools session
	// does not always catch (it attaches to the frame as it starts). When seen, its answer must be Want; that
	// it changed nothing is the daemon-state check's job.
	outOfProcess bool

	// preflighted: the browser must ask the gateway first (OPTIONS), and never sends the request itself
	// unless the gateway allows this origin by CORS.
	preflighted bool
}

func str(s string) *string { return &s }

// configJSON is the body that would give the supervised profile full autonomy.
const configJSON = `{"prop":"risk_profiles.supervised.level","value":"full"}`

// crossOriginAttempts are the cross-origin page's attempts. A cross-origin page may send simple requests
// (GET/POST with a text/plain, urlencoded or multipart body, no custom header) without asking, and may not
// read the answers; anything else needs the gateway's CORS consent. The shutdown comes last, so that a
// gateway that obeys it has shown everything else first.
func crossOriginAttempts(deviceID string) []pageAttempt {
	rotate := "/api/devices/" + deviceID + "/token/rotate"
	// A text/plain form whose body is JSON: name {"prop":...,"pad":" and value "}, joined by "=".
	jsonForm := map[string]string{`{"prop":"risk_profiles.supervised.level","value":"full","pad":"`: `"}`}
	a := []pageAttempt{
		{Name: "fetch GET /pair/code", Kind: "fetch", Method: "GET", Path: "/pair/code"},
		{Name: "fetch no-cors GET /pair/code", Kind: "fetch", Method: "GET", Path: "/pair/code", Mode: "no-cors"},
		{Name: "fetch GET /admin/paircode", Kind: "fetch", Method: "GET", Path: "/admin/paircode"},
		{Name: "fetch no-cors GET /admin/paircode", Kind: "fetch", Method: "GET", Path: "/admin/paircode", Mode: "no-cors"},
		{Name: "fetch no-cors POST /admin/paircode/new?rotate=all", Kind: "fetch", Method: "POST", Path: "/admin/paircode/new?rotate=all", Mode: "no-cors", Ctype: "text/plain", Body: str("{}")},
		{Name: "fetch no-cors POST " + rotate, Kind: "fetch", Method: "POST", Path: rotate, Mode: "no-cors", Ctype: "text/plain", Body: str("{}")},
		{Name: "fetch no-cors POST /admin/reload", Kind: "fetch", Method: "POST", Path: "/admin/reload", Mode: "no-cors", Ctype: "text/plain", Body: str("{}")},
		{Name: "fetch PUT /api/config/prop (JSON, preflighted)", Kind: "fetch", Method: "PUT", Path: "/api/config/prop", Ctype: "application/json", Body: str(configJSON), preflighted: true},
		{Name: "fetch no-cors POST /api/pair (text/plain JSON)", Kind: "fetch", Method: "POST", Path: "/api/pair", Mode: "no-cors", Ctype: "text/plain", Body: str(`{"code":"000000"}`)},
	}
	for _, path := range []string{"/admin/reload", "/admin/paircode/new?rotate=all", rotate} {
		a = append(a,
			pageAttempt{Name: "form text/plain POST " + path, Kind: "form", Path: path, Enctype: "text/plain", Fields: jsonForm},
			pageAttempt{Name: "form urlencoded POST " + path, Kind: "form", Path: path, Enctype: "application/x-www-form-urlencoded", Fields: map[string]string{"confirm": "1"}},
			pageAttempt{Name: "form multipart POST " + path, Kind: "form", Path: path, Enctype: "multipart/form-data", Fields: map[string]string{"confirm": "1"}})
	}
	a = append(a,
		// A sandboxed frame's document has an opaque origin: its requests carry "Origin: null".
		pageAttempt{Name: "sandboxed frame (Origin: null) no-cors POST /admin/reload", Kind: "sandboxed-fetch", Path: "/admin/reload", Body: str("{}"), outOfProcess: true},
		pageAttempt{Name: "WebSocket /ws/chat", Kind: "ws", Path: "/ws/chat?agent=default", Protocols: []string{"zeroclaw.v1"}},
		pageAttempt{Name: "WebSocket /acp", Kind: "ws", Path: "/acp", Protocols: []string{"zeroclaw.acp.v1"}},
		pageAttempt{Name: "form text/plain POST /admin/shutdown", Kind: "form", Path: "/admin/shutdown", Enctype: "text/plain", Fields: jsonForm},
		pageAttempt{Name: "form urlencoded POST /admin/shutdown", Kind: "form", Path: "/admin/shutdown", Enctype: "application/x-www-form-urlencoded", Fields: map[string]string{"confirm": "1"}},
		pageAttempt{Name: "fetch no-cors POST /admin/shutdown", Kind: "fetch", Method: "POST", Path: "/admin/shutdown", Mode: "no-cors", Ctype: "text/plain", Body: str("{}")},
	)
	// A GET changes nothing, so its Origin is not checked: the pairing code and the admin routes need the
	// owner's token (401). Every POST and WebSocket upgrade carries this page's Origin: 403.
	for i := range a {
		switch {
		case a[i].preflighted:
		case a[i].Kind == "fetch" && a[i].Method == "GET":
			a[i].Want = http.StatusUnauthorized
		default:
			a[i].Want = http.StatusForbidden
		}
	}
	return a
}

// rebindAttempts are the rebound page's attempts: the gateway is its own origin, so it may read every answer
// and send any header; it reads the pairing code, pairs with it, and uses the token it got.
func rebindAttempts(deviceID string) []pageAttempt {
	rotate := "/api/devices/" + deviceID + "/token/rotate"
	a := []pageAttempt{
		{Name: "GET /pair/code", Kind: "fetch", Method: "GET", Path: "/pair/code"},
		{Name: "GET /admin/paircode", Kind: "fetch", Method: "GET", Path: "/admin/paircode"},
		{Name: "POST /pair with the code", Kind: "fetch", Method: "POST", Path: "/pair", Pair: true},
		{Name: "GET /api/status with the token", Kind: "fetch", Method: "GET", Path: "/api/status", Auth: true},
		{Name: "PUT /api/config/prop with the token", Kind: "fetch", Method: "PUT", Path: "/api/config/prop", Ctype: "application/json", Body: str(configJSON), Auth: true},
		{Name: "POST " + rotate + " with the token", Kind: "fetch", Method: "POST", Path: rotate, Ctype: "application/json", Body: str("{}"), Auth: true},
		{Name: "WebSocket /ws/chat with the token", Kind: "ws", Path: "/ws/chat?agent=default", Protocols: []string{"zeroclaw.v1"}, Auth: true},
		{Name: "WebSocket /acp with the token", Kind: "ws", Path: "/acp", Protocols: []string{"zeroclaw.acp.v1"}, Auth: true},
		{Name: "POST /admin/reload", Kind: "fetch", Method: "POST", Path: "/admin/reload", Ctype: "application/json", Body: str("{}"), Auth: true},
		{Name: "POST /admin/paircode/new?rotate=all", Kind: "fetch", Method: "POST", Path: "/admin/paircode/new?rotate=all", Ctype: "application/json", Body: str("{}"), Auth: true},
		{Name: "POST /admin/shutdown", Kind: "fetch", Method: "POST", Path: "/admin/shutdown", Ctype: "application/json", Body: str("{}"), Auth: true},
	}
	for i := range a {
		a[i].Want = http.StatusForbidden // a foreign Host, whatever the route
	}
	return a
}

// renderAttack is the attacker's page for gw ("" for the page's own origin), reporting to collector.
func renderAttack(t *testing.T, gw, collector string, attempts []pageAttempt) []byte {
	t.Helper()
	cfg, err := json.Marshal(map[string]any{"gw": gw, "collector": collector, "attempts": attempts})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(attackPage, "/*CFG*/null") {
		t.Fatal("testdata/attack.html has lost its /*CFG*/null placeholder")
	}
	return []byte(strings.Replace(attackPage, "/*CFG*/null", string(cfg), 1))
}

// collector is the attacker's own server: it serves the page at /attack and keeps every report the page sends
// to /report, raw, to check that no secret ever reached it.
type collector struct {
	srv  *httptest.Server
	page []byte // set before the browser loads it

	mu      sync.Mutex // guards the fields below
	raw     bytes.Buffer
	reports []map[string]any
}

func newCollector(t *testing.T) *collector {
	c := &collector{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/attack":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			_, _ = w.Write(c.page)
		case "/report":
			b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			var m map[string]any
			_ = json.Unmarshal(b, &m)
			c.mu.Lock()
			c.raw.Write(b)
			c.raw.WriteByte('\n')
			if m != nil {
				c.reports = append(c.reports, m)
			}
			c.mu.Unlock()
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(c.srv.Close)
	return c
}

// wait returns the page's reports once it reported "done" (all its attempts are over).
func (c *collector) wait(t *testing.T) ([]map[string]any, string) {
	t.Helper()
	var out []map[string]any
	var raw string
	t.Cleanup(func() {
		if t.Failed() {
			c.mu.Lock()
			t.Logf("the page's reports:\n%s", c.raw.String())
			c.mu.Unlock()
		}
	})
	eventually(t, 45*time.Second, "the attacker's page reports done", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, r := range c.reports {
			if r["name"] == "done" {
				out, raw = slices.Clone(c.reports), c.raw.String()
				return true
			}
		}
		return false
	})
	return out, raw
}

// target is a fresh install whose daemon serves the gateway on 127.0.0.1:port, with its owner paired and a
// pairing code pending (the one a page would most like to read).
type target struct {
	d        *proc
	h, root  string
	sock     string
	port     int
	base     string // http://127.0.0.1:port
	token    string // the owner's device token
	deviceID string
	code     string // the pending pairing code
	config   []byte // config.toml's bytes
	gen      float64
}

// freePort is a port free on 127.0.0.1 (and, when also is set, on that address too).
func freePort(t *testing.T, also string) (int, net.Listener) {
	t.Helper()
	for range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
		if also == "" {
			return port, nil
		}
		other, err := net.Listen("tcp", fmt.Sprintf("%s:%d", also, port))
		if err == nil {
			return port, other
		}
	}
	t.Fatalf("no port free on both 127.0.0.1 and %s", also)
	return 0, nil
}

func startTarget(t *testing.T, port int) *target {
	t.Helper()
	// An agent for /ws/chat?agent=default to chat with, on the offline echo model.
	cfg := fmt.Sprintf(`schema_version = 3

[providers.models.echo.default]
model = "echo"

[agents.default]
model_provider = "echo.default"
risk_profile = "supervised"

[risk_profiles.supervised]
level = "supervised"

[gateway]
port = %d
`, port)
	h, root := homeWithConfig(t, cfg)
	tg := &target{h: h, root: root, sock: filepath.Join(root, "data", "daemon.sock"), port: port}
	tg.d = start(t, envOwnPort(h), "daemon")
	waitSocket(t, tg.d, tg.sock)
	tg.base, tg.token = pairWithBanner(t, tg.d)
	if want := fmt.Sprintf("http://127.0.0.1:%d", port); tg.base != want {
		t.Fatalf("gateway at %s, want %s", tg.base, want)
	}
	devs := tg.devices(t)
	if len(devs) != 1 {
		t.Fatalf("devices after pairing the owner: %v", devs)
	}
	tg.deviceID = devs[0]
	out, errOut, rc := run(t, envOwnPort(h), "", "pair", "code")
	if rc != 0 || len(strings.TrimSpace(out)) != 6 {
		t.Fatalf("pair code: %d %q %q", rc, out, errOut)
	}
	tg.code = strings.TrimSpace(out)
	tg.gen = tg.reload(t)
	var err error
	if tg.config, err = os.ReadFile(filepath.Join(root, "config.toml")); err != nil {
		t.Fatal(err)
	}
	if s := tg.status(t); s != http.StatusOK {
		t.Fatalf("the owner's token: status %d", s)
	}
	return tg
}

// devices is the device registry's ids, over the socket.
func (tg *target) devices(t *testing.T) []string {
	t.Helper()
	c := dialRPC(t, tg.sock)
	c.Initialize()
	res, ok := c.Call("devices/list", map[string]any{}, 2)["result"].(map[string]any)
	if !ok {
		t.Fatal("devices/list failed")
	}
	var ids []string
	for _, d := range res["devices"].([]any) {
		ids = append(ids, d.(map[string]any)["id"].(string))
	}
	slices.Sort(ids)
	return ids
}

// reload asks the daemon to reload over the socket and returns the config generation now live: each reload
// moves it by one, so it also counts the reloads anybody else caused.
func (tg *target) reload(t *testing.T) float64 {
	t.Helper()
	c := dialRPC(t, tg.sock)
	c.Initialize()
	res, ok := c.Call("config/reload", map[string]any{}, 2)["result"].(map[string]any)
	if !ok {
		t.Fatal("config/reload failed")
	}
	return res["generation"].(float64)
}

// status is GET /api/status with the owner's token.
func (tg *target) status(t *testing.T) int {
	t.Helper()
	req, _ := http.NewRequest("GET", tg.base+"/api/status", nil)
	req.Header.Set("Authorization", "Bearer "+tg.token)
	res, err := (&http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("GET /api/status: %v", err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// unchanged asserts that the daemon is as startTarget left it.
func (tg *target) unchanged(t *testing.T) {
	t.Helper()
	if tg.d.exited() {
		t.Fatalf("the daemon exited: the page shut it down (%v)", tg.d.err)
	}
	if pid := statusPID(t, tg.sock); pid != tg.d.cmd.Process.Pid {
		t.Fatalf("status pid %d, daemon %d", pid, tg.d.cmd.Process.Pid)
	}
	if b, err := os.ReadFile(filepath.Join(tg.root, "config.toml")); err != nil || !bytes.Equal(b, tg.config) {
		t.Errorf("config.toml changed (%v):\nbefore:\n%s\nafter:\n%s", err, tg.config, b)
	}
	if devs := tg.devices(t); !slices.Equal(devs, []string{tg.deviceID}) {
		t.Errorf("devices now %v, were [%s]", devs, tg.deviceID)
	}
	if s := tg.status(t); s != http.StatusOK {
		t.Errorf("the owner's token no longer works: GET /api/status %d", s)
	}
	if out, _, rc := run(t, envOwnPort(tg.h), "", "pair", "code"); rc != 0 || strings.TrimSpace(out) != tg.code {
		t.Errorf("the pending pairing code changed: %d %q, was %s", rc, out, tg.code)
	}
	if g := tg.reload(t); g != tg.gen+1 {
		t.Errorf("config generation %v after one more reload from %v: the page reloaded the daemon %v time(s)", g, tg.gen, g-tg.gen-1)
	}
}

// noSecrets asserts that nothing the page reported holds the pairing code or a token.
func (tg *target) noSecrets(t *testing.T, raw string) {
	t.Helper()
	for what, s := range map[string]string{"the pending pairing code": tg.code, "the owner's token": tg.token, "a device token": "zc_"} {
		if strings.Contains(raw, s) {
			t.Errorf("the page read %s (%q) and sent it to its collector:\n%s", what, s, raw)
		}
	}
}

// reportsByName indexes the page's reports and checks there is one per attempt.
func reportsByName(t *testing.T, reports []map[string]any, attempts []pageAttempt) map[string]map[string]any {
	t.Helper()
	by := map[string]map[string]any{}
	for _, r := range reports {
		by[r["name"].(string)] = r
	}
	for _, a := range attempts {
		if by[a.Name] == nil {
			t.Errorf("no report for %q", a.Name)
		}
	}
	return by
}

// A page from another origin on loopback tries every simple request a browser lets it send to the gateway,
// and two WebSockets; it reads nothing, opens no socket, and the daemon is unchanged.
func TestBrowserCrossOriginCannotDriveGateway(t *testing.T) {
	chromiumPath(t)
	port, _ := freePort(t, "")
	tg := startTarget(t, port)
	col := newCollector(t)
	attempts := crossOriginAttempts(tg.deviceID)
	col.page = renderAttack(t, tg.base, col.srv.URL, attempts)
	if !strings.HasPrefix(col.srv.URL, "http://127.0.0.1:") || col.srv.URL == tg.base {
		t.Fatalf("the attacker's origin %s is not another origin on loopback than %s", col.srv.URL, tg.base)
	}

	b := startBrowser(t, "")
	b.navigate(col.srv.URL + "/attack")
	reports, raw := col.wait(t)
	if origin := reports[len(reports)-1]["origin"]; origin != col.srv.URL {
		t.Fatalf("the page ran at %v, not at the attacker's origin %s", origin, col.srv.URL)
	}
	by := reportsByName(t, reports, attempts)
	for _, a := range attempts {
		r := by[a.Name]
		if r == nil {
			continue
		}
		switch a.Kind {
		case "fetch", "sandboxed-fetch":
			// A cors fetch fails (no CORS consent); a no-cors one is opaque: status 0, empty body.
			if r["error"] == nil && (r["type"] != "opaque" || r["body"] != "") {
				t.Errorf("%s: the page read an answer: %v", a.Name, r)
			}
		case "form":
			if body, _ := r["body"].(string); body != "" {
				t.Errorf("%s: the page read the answer in its frame: %q", a.Name, body)
			}
		case "ws":
			if r["opened"] != false {
				t.Errorf("%s: the WebSocket opened: %v", a.Name, r)
			}
		}
	}
	tg.noSecrets(t, raw)
	checkNetwork(t, b, tg.base, attempts, func(netRequest) bool { return false })
	tg.unchanged(t)
}

// checkNetwork asserts what the browser saw of the gateway (every URL under gw, http and ws): each attempt was
// sent and answered with the status it wants (a preflighted one was never sent at all), and any other request
// (a favicon, the page itself) passed other.
func checkNetwork(t *testing.T, b *browser, gw string, attempts []pageAttempt, other func(netRequest) bool) {
	t.Helper()
	sent := map[string][]string{} // method and URL: the attempts at it that the browser must send
	for _, a := range attempts {
		if !a.preflighted && !a.outOfProcess {
			sent[a.target(gw)] = append(sent[a.target(gw)], a.Name)
		}
	}
	// The page reported done once every attempt had settled in its script; the browser's network events trail
	// it, so wait (bounded) until every attempt has its answer and every request seen has settled.
	var reqs []netRequest
	var answered map[string]int
	settled := func() bool {
		reqs = append(b.requests(gw+"/"), b.requests("ws"+strings.TrimPrefix(gw, "http")+"/")...)
		answered = map[string]int{}
		done := true
		for _, r := range reqs {
			done = done && r.Done
			if r.Method != "OPTIONS" && r.Status != 0 { // a preflight's request is checked below
				answered[r.Method+" "+r.URL]++
			}
		}
		for target, names := range sent {
			done = done && answered[target] >= len(names)
		}
		return done
	}
	for deadline := time.Now().Add(10 * time.Second); !settled() && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("the gateway's answers, as the browser saw them:\n%s", joinRequests(reqs))
	for _, r := range reqs {
		if r.Method == "OPTIONS" || r.Status == 0 {
			continue
		}
		var wants []int
		for _, a := range attempts {
			if a.target(gw) == r.Method+" "+r.URL && !slices.Contains(wants, a.Want) {
				wants = append(wants, a.Want)
			}
		}
		switch {
		case len(wants) > 0 && !slices.Contains(wants, r.Status):
			t.Errorf("the gateway answered %s, want %v", r, wants)
		case len(wants) == 0 && !other(r):
			t.Errorf("the gateway answered %s to a request the page did not make", r)
		}
	}
	for _, a := range attempts {
		if a.preflighted && answered[a.target(gw)] > 0 {
			t.Errorf("%s: the browser sent it without CORS consent, and the gateway answered", a.Name)
		}
	}
	// Every attempt was answered: as many answers to each method and URL as attempts at it.
	for target, names := range sent {
		if n := answered[target]; n < len(names) {
			t.Errorf("%d answer(s) from the gateway to %s for %d attempts %q within 10s; the browser saw:\n%s", n, target, len(names), names, joinRequests(reqs))
		}
	}
}

// target is the attempt's request as the browser reports it: "METHOD URL".
func (a pageAttempt) target(gw string) string {
	switch a.Kind {
	case "ws":
		return "GET ws" + strings.TrimPrefix(gw, "http") + a.Path
	case "form", "sandboxed-fetch":
		return "POST " + gw + a.Path
	}
	return a.Method + " " + gw + a.Path
}

func joinRequests(reqs []netRequest) string {
	var sb strings.Builder
	for _, r := range reqs {
		sb.WriteString("  " + r.String() + "\n")
	}
	return sb.String()
}

// A DNS-rebinding page: its origin is http://rebind.test:PORT, PORT the gateway's, and what it asks of that
// origin after it loaded reaches the gateway. In a real rebinding the attacker's DNS first answers with the
// attacker's address, which serves the page, then with 127.0.0.1, so that the page's later same-origin requests
// go to the gateway, with Host rebind.test:PORT and an Origin (when sent) of http://rebind.test:PORT: the browser
// sees one origin and lets the page read every answer and send any header. Simulated here with Chromium's
// --host-resolver-rules mapping rebind.test to 127.0.0.2, where a stand-in for the attacker's host listens on
// the gateway's port: it serves the page at /__attack (closing that connection, so nothing else rides on it) and
// passes every other connection through, byte for byte, to the gateway on 127.0.0.1:PORT, which is what the
// rebound name would reach. The gateway must refuse on Host (403), and the page must learn nothing.
func TestBrowserDNSRebindingCannotDriveGateway(t *testing.T) {
	chromiumPath(t)
	port, ln := freePort(t, "127.0.0.2")
	tg := startTarget(t, port)
	col := newCollector(t)
	attempts := rebindAttempts(tg.deviceID)
	page := renderAttack(t, "", col.srv.URL, attempts)
	origin := fmt.Sprintf("http://rebind.test:%d", port)
	serveRebind(t, ln, page, fmt.Sprintf("127.0.0.1:%d", port))

	b := startBrowser(t, "MAP rebind.test 127.0.0.2")
	b.navigate(origin + "/__attack")
	reports, raw := col.wait(t)
	if o := reports[len(reports)-1]["origin"]; o != origin {
		t.Fatalf("the page ran at %v, not at %s", o, origin)
	}
	by := reportsByName(t, reports, attempts)
	for _, a := range attempts {
		r := by[a.Name]
		if r == nil {
			continue
		}
		switch a.Kind {
		case "fetch":
			// Same origin: the page reads the status and body of whatever the gateway answered.
			if r["status"] != float64(http.StatusForbidden) {
				t.Errorf("%s: the page got %v, want the gateway's 403 for a foreign Host", a.Name, r)
			}
		case "ws":
			if r["opened"] != false {
				t.Errorf("%s: the WebSocket opened: %v", a.Name, r)
			}
		}
	}
	tg.noSecrets(t, raw)
	checkNetwork(t, b, origin, attempts, func(r netRequest) bool {
		// The page itself came from the stand-in; anything else the browser asked for (its favicon) reached the
		// gateway under the foreign Host.
		return r.URL == origin+"/__attack" || r.Status == http.StatusForbidden
	})
	tg.unchanged(t)
}

// serveRebind is the attacker's host after the rebinding: on ln it serves page at GET /__attack and passes
// every other connection through to gw untouched. It stops with the test.
func serveRebind(t *testing.T, ln net.Listener, page []byte, gw string) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]struct{}{}
	track := func(c net.Conn) bool {
		mu.Lock()
		defer mu.Unlock()
		if conns == nil {
			return false
		}
		conns[c] = struct{}{}
		return true
	}
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for c := range conns {
			_ = c.Close()
		}
		conns = nil
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if !track(c) {
				_ = c.Close()
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				rebindConn(c, page, gw, track)
			}()
		}
	}()
}

func rebindConn(c net.Conn, page []byte, gw string, track func(net.Conn) bool) {
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if err != nil {
		return
	}
	if strings.HasPrefix(line, "GET /__attack ") {
		for {
			h, err := br.ReadString('\n')
			if err != nil || h == "\r\n" || h == "\n" {
				break
			}
		}
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nCache-Control: no-store\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", len(page))
		_, _ = c.Write(page)
		return
	}
	g, err := net.Dial("tcp", gw)
	if err != nil {
		return
	}
	if !track(g) {
		_ = g.Close()
		return
	}
	defer g.Close()
	if _, err := io.WriteString(g, line); err != nil {
		return
	}
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(g, br)
		_ = g.(*net.TCPConn).CloseWrite()
		close(done)
	}()
	_, _ = io.Copy(c, g)
	_ = c.Close()
	<-done
}
