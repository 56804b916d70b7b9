package gateway_test

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zeroclaw-go/zeroclaw/internal/mcpserver"
	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// BenchmarkMCPToolCall compares one MCP tool call over /mcp (an open session, the SDK's client: a POST whose
// answer is an event stream, the schema check, the table, the native method) with the same method through its
// plain route, in the same run, one client:
// go test -bench MCPToolCall -run '^$' ./internal/gateway/
//
//	BenchmarkMCPToolCall/route_cron   GET /api/cron with a bearer token (auth, cron/list)
//	BenchmarkMCPToolCall/mcp_cron     tools/call cron_list on /mcp, the SDK's client
//	BenchmarkMCPToolCall/mcp_raw      the same POST by hand, its event read: the server's share
func BenchmarkMCPToolCall(b *testing.B) {
	var banner rpctest.SyncBuf
	d := rpctest.Start(b, rpctest.WithConfig(rpctest.GatewayConfig), rpctest.WithBanner(&banner))
	g := rpctest.NewGateway(b, d.GatewayURL(b))
	code := rpctest.BannerCode.FindStringSubmatch(banner.String())[1]
	auth := rpctest.PairOnce(b, g, code)
	b.Run("route_cron", func(b *testing.B) {
		for b.Loop() {
			g.Do("GET", "/api/cron", nil, auth).Want(b, 200)
		}
	})
	b.Run("mcp_cron", func(b *testing.B) {
		c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := c.Connect(b.Context(), &mcp.StreamableClientTransport{Endpoint: g.Base + "/mcp", MaxRetries: -1,
			DisableStandaloneSSE: true, HTTPClient: bearerClient(b, auth)}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		for b.Loop() {
			res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: mcpserver.ToolCronList, Arguments: map[string]any{}})
			if err != nil || res.IsError {
				b.Fatalf("%v %+v", err, res)
			}
		}
	})
	b.Run("mcp_raw", func(b *testing.B) {
		hdr := append([]string{auth}, mcpHeaders...)
		r := g.Do("POST", "/mcp", mcpInit, hdr...).Want(b, 200)
		hdr = append(hdr, "Mcp-Session-Id: "+r.Header.Get("Mcp-Session-Id"))
		g.Do("POST", "/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr...).Want(b, 202)
		call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"cron_list","arguments":{}}}`
		for b.Loop() {
			if ev := firstEvent(b, g, call, hdr...); !strings.Contains(ev, `"jobs"`) {
				b.Fatal(ev)
			}
		}
	})
}
