package e2e

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A provider's error text reaches the terminal through the CLI's "Error:" line. A hostile provider answering
// the quickstart's test request with terminal control sequences (OSC 52 writes the clipboard, ESC [2J clears
// the screen and hides what came before, a CR rewrites the line) must not have them acted on: the line shows
// them as escapes.
func TestQuickstartProviderErrorCannotDriveTheTerminal(t *testing.T) {
	t.Parallel()
	hostile := "bad model\x1b]52;c;Y3VybCBldmlsfHNo\x07\x1b[2J\rall good, nothing failed \u202e"
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/plain/") { // not JSON: the body as it came
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(hostile))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":{"message":` + jsonString(hostile) + `,"type":"invalid_request_error"}}`))
	}))
	defer backend.Close()
	h, _ := homeWithConfig(t, handWritten)
	for _, base := range []string{"/v1", "/plain/v1"} {
		t.Run(strings.Trim(base, "/"), func(t *testing.T) { quickstartAgainst(t, h, backend.URL+base) })
	}
}

func quickstartAgainst(t *testing.T, h, uri string) {
	out, errOut, code := run(t, env(h), "", "quickstart", "--yes", "--test-timeout", "20", "--provider", "openai",
		"--uri", uri, "--model", "m")
	if code == 0 {
		t.Fatalf("exit 0\nstdout: %s\nstderr: %s", out, errOut)
	}
	if !strings.Contains(out+errOut, "bad model") {
		t.Fatalf("the provider's error is not shown (nothing was tested)\nstdout: %q\nstderr: %q", out, errOut)
	}
	for _, c := range []string{"\x1b", "\x07", "\r", "\u202e"} {
		if strings.Contains(out+errOut, c) {
			t.Errorf("the output holds %q from the provider's error\nstdout: %q\nstderr: %q", c, out, errOut)
		}
	}
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case r < 0x20:
			b.WriteString(`\u00` + "0123456789abcdef"[r>>4:r>>4+1] + "0123456789abcdef"[r&15:r&15+1])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
