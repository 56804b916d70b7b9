package acp

import (
	"net/url"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// editorServers never panics on a hostile mcpServers, and what it accepts is bounded and well-formed: at most
// maxEditorServers, names without "__", stdio with a command, http/sse with an http(s) URL and headers with no
// line break.
func FuzzEditorServers(f *testing.F) {
	for _, s := range []string{`[]`, `null`, `[{"name":"a","command":"x","env":[{"name":"K","value":"v"}]}]`,
		`[{"type":"http","name":"h","url":"https://h/","headers":[{"name":"Authorization","value":"Bearer t"}]}]`,
		`[{"type":"sse","name":"s","url":"http://h/sse"}]`, `[{"type":"HTTP","name":"x","url":"http://a"}]`, `{}`, `[1]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		out, err := editorServers([]byte(raw))
		if err != nil {
			return
		}
		if len(out) > maxEditorServers {
			t.Fatalf("%d servers accepted", len(out))
		}
		for _, s := range out {
			if s.Name == "" || strings.Contains(s.Name, "__") || len(s.Name) > 64 {
				t.Fatalf("name %q accepted", s.Name)
			}
			switch s.TransportOrDefault() {
			case config.MCPStdio:
				if strings.TrimSpace(s.Command) == "" {
					t.Fatalf("stdio without a command: %+v", s)
				}
			case config.MCPHTTP, config.MCPSSE:
				u, err := url.Parse(s.URL)
				if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					t.Fatalf("url %q accepted", s.URL)
				}
				for k, v := range s.Headers {
					if !headerName(k) || strings.ContainsAny(v, "\r\n\x00") {
						t.Fatalf("header %q: %q accepted", k, v)
					}
				}
			default:
				t.Fatalf("transport %q accepted", s.Transport)
			}
		}
	})
}
