package mcp

import (
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// Security-matrix row (mcp http/sse, the ACP editor's included): a credential in the server's URL (a password
// in its userinfo, a token or a signature in its query) is a secret like a header value: a server that cannot be reached is
// reported in its status and the log without it.
func TestURLCredentialsNotInStatusOrLog(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens: every connect fails
	var logs syncBuf
	m := New(Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), BackoffMin: 20 * time.Millisecond, BackoffMax: 200 * time.Millisecond})
	t.Cleanup(m.Close)
	m.Reconcile(config.MCPConfig{Enabled: true, Servers: []config.MCPServerConfig{
		{Name: "q", Transport: config.MCPHTTP, Start: config.MCPStartEager, URL: "http://" + addr + "/mcp?access_token=QSECRETVALUE12345&x=1"},
		{Name: "s", Transport: config.MCPHTTP, Start: config.MCPStartEager, URL: "http://" + addr + "/mcp?sig=QSECRETVALUE%2B9876&x=1"},
		{Name: "u", Transport: config.MCPSSE, Start: config.MCPStartEager, URL: "http://bob:PSECRETVALUE12345@" + addr + "/sse"},
	}})
	waitFor(t, m, "both servers failing", func() bool {
		return statusOf(m, "q").LastError != "" && statusOf(m, "u").LastError != "" && statusOf(m, "s").LastError != "" &&
			strings.Count(logs.String(), "mcp server down") >= 3
	})
	for _, where := range []string{statusOf(m, "q").LastError, statusOf(m, "u").LastError, statusOf(m, "s").LastError, logs.String()} {
		if strings.Contains(where, "SECRETVALUE") {
			t.Fatalf("a URL credential leaked: %s", where)
		}
	}
}
