package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// chromiumInstallHint is how to get the browser the browser tests drive (.ci/run installs it).
const chromiumInstallHint = "install Chromium: apt-get install chromium (Debian's package; .ci/run installs it)"

// chromiumPath finds the Chromium binary. A missing browser fails the test, in CI and out of it: the browser
// tests are the proof that a web page cannot drive the gateway, and a skipped proof proves nothing.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true but no chromium on PATH: the browser proofs cannot run; %s", chromiumInstallHint)
	}
	t.Fatalf("no chromium on PATH: %s", chromiumInstallHint)
	return ""
}

// browser is a headless Chromium driven over the DevTools protocol: one page, whose network activity is
// recorded from Network.* events (what the browser sent and what each server answered, including the answers a
// page's script may not read).
type browser struct {
	t    *testing.T
	cmd  *exec.Cmd
	conn *websocket.Conn
	ctx  context.Context
	wg   sync.WaitGroup // the reader and the attach goroutines

	mu      sync.Mutex // guards the fields below
	nextID  int
	replies map[int]chan cdpMessage
	reqs    map[string]*netRequest
	order   []string // request ids, first seen first
	console []string // the page's console messages and uncaught exceptions
}

// netRequest is one request the page's browser made, as the DevTools protocol saw it.
type netRequest struct {
	ID, Method, URL, Type string
	WebSocket             bool
	Status                int    // the response's status (a WebSocket's handshake response), 0 while none
	Failed                string // loadingFailed's error text and CORS/blocked reason
	Done                  bool   // a response or a failure arrived
}

func (r netRequest) String() string {
	s := fmt.Sprintf("%s %s (%s)", r.Method, r.URL, r.Type)
	if r.Status != 0 {
		s += " -> " + strconv.Itoa(r.Status)
	}
	if r.Failed != "" {
		s += " failed: " + r.Failed
	}
	return s
}

// wsRefusal is Chromium's error for a WebSocket handshake answered with a status other than 101.
var wsRefusal = regexp.MustCompile(`Unexpected response code: (\d{3})`)

type cdpMessage struct {
	ID        int             `json:"id"`
	SessionID string          `json:"sessionId"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params"`
	Result    json.RawMessage `json:"result"`
	Error     json.RawMessage `json:"error"`
}

// startBrowser runs headless Chromium as root in a container (no sandbox, no GPU) on a fresh profile, with
// DevTools on an ephemeral loopback port, and attaches to its page with the Network domain on. hostRules is
// --host-resolver-rules; every other name resolves to nothing (IP literals on 127.0.0.1 are left alone), so the
// browser reaches nothing off this host.
func startBrowser(t *testing.T, hostRules string) *browser {
	t.Helper()
	bin := chromiumPath(t)
	profile := t.TempDir()
	rules := "MAP * ~NOTFOUND,EXCLUDE 127.0.0.1"
	if hostRules != "" {
		rules = hostRules + "," + rules
	}
	args := []string{
		"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--user-data-dir=" + profile, "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
		"--no-first-run", "--no-default-browser-check", "--no-proxy-server",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--host-resolver-rules=" + rules,
		"about:blank",
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+profile)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its zygote and renderers go with it
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v; %s", bin, err, chromiumInstallHint)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	ctx, cancel := context.WithCancel(context.Background())
	b := &browser{t: t, cmd: cmd, ctx: ctx, replies: map[int]chan cdpMessage{}, reqs: map[string]*netRequest{}}
	t.Cleanup(func() {
		cancel()
		if b.conn != nil {
			_ = b.conn.CloseNow()
		}
		b.wg.Wait()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the group this test started
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			t.Errorf("chromium (pid %d) did not exit after SIGKILL", cmd.Process.Pid)
		}
		if t.Failed() {
			t.Logf("chromium output (tail):\n%s", tail(out.String(), 4000))
		}
	})

	// Chromium writes the DevTools port it bound into the profile.
	var port string
	for deadline := time.Now().Add(20 * time.Second); port == ""; time.Sleep(50 * time.Millisecond) {
		select {
		case <-exited:
			t.Fatalf("chromium exited at start:\n%s", tail(out.String(), 4000))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromium wrote no DevToolsActivePort within 20s:\n%s", tail(out.String(), 4000))
		}
		if data, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort")); err == nil {
			if first, _, ok := strings.Cut(string(data), "\n"); ok {
				port = first
			}
		}
	}
	wsURL := b.pageTarget(port)
	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	defer dcancel()
	conn, _, err := websocket.Dial(dctx, wsURL, nil)
	if err != nil {
		t.Fatalf("devtools websocket %s: %v", wsURL, err)
	}
	conn.SetReadLimit(64 << 20)
	b.conn = conn
	b.wg.Add(1)
	go b.read()
	b.call("Network.enable", nil)
	b.call("Page.enable", nil)
	b.call("Runtime.enable", nil)
	// Frames in other processes (a sandboxed iframe is one) are targets of their own: attach to each, paused
	// at its start, so that its requests are recorded too.
	b.call("Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})
	t.Cleanup(func() {
		if t.Failed() {
			b.mu.Lock()
			defer b.mu.Unlock()
			t.Logf("the page's console:\n%s", strings.Join(b.console, "\n"))
			var all []string
			for _, id := range b.order {
				if r := b.reqs[id]; !strings.HasPrefix(r.URL, "data:") {
					all = append(all, r.String())
				}
			}
			t.Logf("the page's requests:\n%s", strings.Join(all, "\n"))
		}
	})
	return b
}

// pageTarget is the DevTools WebSocket of the browser's first page (about:blank).
func (b *browser) pageTarget(port string) string {
	b.t.Helper()
	client := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 5 * time.Second}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		res, err := client.Get("http://127.0.0.1:" + port + "/json/list")
		if err == nil {
			var targets []struct{ Type, URL, WebSocketDebuggerURL string }
			err = json.NewDecoder(res.Body).Decode(&targets)
			res.Body.Close()
			for _, tg := range targets {
				if tg.Type == "page" && tg.URL == "about:blank" && tg.WebSocketDebuggerURL != "" {
					return tg.WebSocketDebuggerURL
				}
			}
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("no about:blank page target on devtools port %s (last error %v)", port, err)
		}
	}
}

// read dispatches the DevTools messages: replies to their callers, Network events into the request log.
func (b *browser) read() {
	defer b.wg.Done()
	for {
		_, data, err := b.conn.Read(b.ctx)
		if err != nil {
			return
		}
		var m cdpMessage
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		if m.ID != 0 {
			b.mu.Lock()
			ch := b.replies[m.ID]
			delete(b.replies, m.ID)
			b.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		if m.Method == "Target.attachedToTarget" {
			var p struct {
				SessionID string `json:"sessionId"`
			}
			if json.Unmarshal(m.Params, &p) == nil && p.SessionID != "" {
				b.wg.Add(1)
				go b.attached(p.SessionID) // not on the reader: it waits for replies
			}
			continue
		}
		b.event(m.Method, m.Params)
	}
}

// attached turns on the Network domain of a frame's target and lets it run.
func (b *browser) attached(session string) {
	defer b.wg.Done()
	for _, method := range []string{"Network.enable", "Runtime.runIfWaitingForDebugger"} {
		if _, err := b.send(session, method, nil); err != nil {
			return // the frame went away
		}
	}
}

// event records what a Network event says about a request.
func (b *browser) event(method string, params json.RawMessage) {
	var p struct {
		RequestID string `json:"requestId"`
		Type      string `json:"type"`
		URL       string `json:"url"`
		Request   struct {
			URL    string `json:"url"`
			Method string `json:"method"`
		} `json:"request"`
		Response struct {
			Status int `json:"status"`
		} `json:"response"`
		StatusCode      int    `json:"statusCode"`
		ErrorText       string `json:"errorText"`
		ErrorMessage    string `json:"errorMessage"`
		BlockedReason   string `json:"blockedReason"`
		CorsErrorStatus *struct {
			CorsError string `json:"corsError"`
		} `json:"corsErrorStatus"`
	}
	if method == "Runtime.consoleAPICalled" || method == "Runtime.exceptionThrown" {
		b.mu.Lock()
		b.console = append(b.console, method+" "+string(params))
		b.mu.Unlock()
		return
	}
	if !strings.HasPrefix(method, "Network.") || json.Unmarshal(params, &p) != nil || p.RequestID == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.reqs[p.RequestID]
	if r == nil {
		r = &netRequest{ID: p.RequestID}
		b.reqs[p.RequestID] = r
		b.order = append(b.order, p.RequestID)
	}
	switch method {
	case "Network.requestWillBeSent":
		r.Method, r.URL, r.Type = p.Request.Method, p.Request.URL, p.Type
	case "Network.responseReceived", "Network.webSocketHandshakeResponseReceived":
		r.Status, r.Done = p.Response.Status, true
	case "Network.responseReceivedExtraInfo":
		// The raw response, sent even when the page may not see it (CORS, CORP, X-Frame-Options): the status
		// the server answered.
		r.Status = p.StatusCode
	case "Network.loadingFailed":
		r.Failed = strings.TrimSpace(p.ErrorText + " " + p.BlockedReason)
		if p.CorsErrorStatus != nil {
			r.Failed += " cors:" + p.CorsErrorStatus.CorsError
		}
		r.Done = true
	case "Network.webSocketCreated":
		r.Method, r.URL, r.Type, r.WebSocket = "GET", p.URL, "WebSocket", true
	case "Network.webSocketFrameError":
		// A refused handshake is reported only as this error: the status is in its text.
		r.Failed = strings.TrimSpace(r.Failed + " " + p.ErrorMessage)
		if m := wsRefusal.FindStringSubmatch(p.ErrorMessage); m != nil {
			r.Status, _ = strconv.Atoi(m[1])
		} else if strings.Contains(p.ErrorMessage, "HTTP Authentication failed") {
			r.Status = http.StatusUnauthorized // Chromium's words for a 401 it has no credentials for
		}
	case "Network.webSocketClosed":
		r.Done = true
	}
}

// call sends a DevTools command to the page and waits for its reply; a failure fails the test.
func (b *browser) call(method string, params any) json.RawMessage {
	b.t.Helper()
	res, err := b.send("", method, params)
	if err != nil {
		b.t.Fatal(err)
	}
	return res
}

// send sends a DevTools command to session ("" for the page) and waits for its reply.
func (b *browser) send(session, method string, params any) (json.RawMessage, error) {
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	ch := make(chan cdpMessage, 1)
	b.replies[id] = ch
	b.mu.Unlock()
	req := map[string]any{"id": id, "method": method, "params": params}
	if session != "" {
		req["sessionId"] = session
	}
	msg, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer cancel()
	if err := b.conn.Write(ctx, websocket.MessageText, msg); err != nil {
		return nil, fmt.Errorf("devtools %s: %w", method, err)
	}
	select {
	case m := <-ch:
		if len(m.Error) > 0 {
			return nil, fmt.Errorf("devtools %s: %s", method, m.Error)
		}
		return m.Result, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("devtools %s: no reply within 15s", method)
	}
}

// navigate loads url in the page.
func (b *browser) navigate(url string) {
	b.t.Helper()
	b.call("Page.navigate", map[string]string{"url": url})
}

// requests returns a copy of the requests seen so far whose URL starts with prefix, in the order they began.
func (b *browser) requests(prefix string) []netRequest {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []netRequest
	for _, id := range b.order {
		if r := b.reqs[id]; strings.HasPrefix(r.URL, prefix) {
			out = append(out, *r)
		}
	}
	return out
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
