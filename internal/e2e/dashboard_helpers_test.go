package e2e

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The DevTools calls the dashboard tests drive pages with: evaluate a script (awaited), wait for a condition
// of the DOM, set the viewport, keep a screenshot.

// eval runs js in the page (a promise is awaited) and decodes its value into out (nil: ignored). A thrown
// exception fails the test.
func (b *browser) eval(js string, out any) {
	b.t.Helper()
	raw := b.call("Runtime.evaluate", map[string]any{"expression": js, "awaitPromise": true, "returnByValue": true})
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		b.t.Fatalf("evaluate %q: %v", js, err)
	}
	if r.Exception != nil {
		b.t.Fatalf("evaluate %q threw: %s %s", js, r.Exception.Text, r.Exception.Exception.Description)
	}
	if out != nil && len(r.Result.Value) > 0 {
		if err := json.Unmarshal(r.Result.Value, out); err != nil {
			b.t.Fatalf("evaluate %q: value %s: %v", js, r.Result.Value, err)
		}
	}
}

// str evaluates js for a string.
func (b *browser) str(js string) string {
	b.t.Helper()
	var s string
	b.eval(js, &s)
	return s
}

// waitJS waits until js evaluates to true (a missing element is false, not a failure).
func (b *browser) waitJS(what, js string) {
	b.t.Helper()
	expr := "(() => { try { return !!(" + js + "); } catch (e) { return false; } })()"
	eventually(b.t, 20*time.Second, what, func() bool {
		var ok bool
		b.eval(expr, &ok)
		return ok
	})
}

// open navigates to url and waits until its page's scripts have run (the document is complete).
func (b *browser) open(url string) {
	b.t.Helper()
	b.navigate(url)
	b.waitJS("the page "+url+" loads", "location.href === "+jsString(url)+" && document.readyState === 'complete'")
}

// viewport sets the page's size (a phone's width, or a desktop's).
func (b *browser) viewport(w, h int, mobile bool) {
	b.t.Helper()
	b.call("Emulation.setDeviceMetricsOverride", map[string]any{"width": w, "height": h, "deviceScaleFactor": 1, "mobile": mobile})
}

// screenshot keeps a PNG of the page as name.png in the screenshot directory.
func (b *browser) screenshot(dir, name string) {
	b.t.Helper()
	raw := b.call("Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true})
	var r struct {
		Data string `json:"data"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		b.t.Fatal(err)
	}
	png, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil || len(png) < 8 || string(png[1:4]) != "PNG" {
		b.t.Fatalf("screenshot %s: not a PNG (%v)", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// screenshotDir is $ZEROCLAW_SCREENSHOT_DIR, or a new temp dir kept after the test (CI keeps it as an
// artifact); the test logs it.
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("ZEROCLAW_SCREENSHOT_DIR")
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "zeroclaw-dashboard-screenshots-"); err != nil {
			t.Fatal(err)
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("dashboard screenshots in %s", dir)
	return dir
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// setValue sets a form field as a user typing would (the input event fires).
func (b *browser) setValue(id, v string) {
	b.t.Helper()
	b.eval("(() => { const e = document.getElementById("+jsString(id)+"); e.value = "+jsString(v)+
		"; e.dispatchEvent(new Event('input', {bubbles: true})); })()", nil)
}

// submit submits the form id as its submit button would.
func (b *browser) submit(id string) {
	b.t.Helper()
	b.eval("document.getElementById("+jsString(id)+").requestSubmit()", nil)
}

// click clicks the element matched by selector.
func (b *browser) click(selector string) {
	b.t.Helper()
	b.eval("document.querySelector("+jsString(selector)+").click()", nil)
}

var _ = strings.Contains
