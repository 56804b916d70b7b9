package mcp

import (
	"bytes"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

func TestGlobMatchAsUpstream(t *testing.T) {
	for _, tc := range []struct {
		pat, name string
		want      bool
	}{
		{"fs__read", "fs__read", true}, {"fs__read", "fs__reader", false}, {"fs__*", "fs__read", true},
		{"fs__*", "fs__", true}, {"fs__*", "web__read", false}, {"*__read", "fs__read", true}, {"*", "x", true},
		{"a*a", "a", false}, {"a*a", "aa", true}, {"*_file", "fs__read_file", true}, {"", "x", false},
	} {
		if got := globMatch(tc.pat, tc.name); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tc.pat, tc.name, got, tc.want)
		}
	}
}

// filterConfig grants agent "x" the servers a and b under runtime profile "p" with groups.
func filterConfig(groups []config.ToolFilterGroup, servers ...config.MCPServerConfig) *config.Config {
	return &config.Config{
		Agents:          map[string]config.AgentConfig{"x": {MCPBundles: []string{"all"}, RuntimeProfile: "p"}},
		MCPBundles:      map[string]config.MCPBundleConfig{"all": {Servers: []string{"a", "b"}}},
		MCP:             config.MCPConfig{Enabled: true, Servers: servers},
		RuntimeProfiles: map[string]config.RuntimeProfile{"p": {ToolFilterGroups: groups}},
	}
}

func mcpOnly(names []string) []string {
	var out []string
	for _, n := range names {
		if strings.Contains(n, "__") {
			out = append(out, n)
		}
	}
	return out
}

// tool_filter_groups as upstream reads them: no group, every MCP tool; with groups, an always group's tools in
// every turn, a dynamic group's only in a turn whose user message holds one of its keywords (any case), the
// rest neither offered nor callable. The generic resource/prompt tools are ours and stay.
func TestToolFilterGroups(t *testing.T) {
	a, b := testServer("a", nil), testServer("b", nil)
	groups := []config.ToolFilterGroup{
		{Mode: "always", Tools: []string{"a__echo"}},
		{Tools: []string{"b__*"}, Keywords: []string{"Browse", "website"}}, // mode empty: dynamic (upstream's default)
	}
	cfg := filterConfig(groups, a, b)
	m := newManager(t, a, b)
	turn := func(msg string) *Set {
		st := m.ForAgent(ctxT(t), cfg, "x", "conv")
		if st == nil {
			t.Fatal("no set")
		}
		st.ForMessage(msg)
		return st
	}
	st := turn("hello there")
	if got := mcpOnly(specNames(st)); !slices.Equal(got, []string{"a__echo"}) {
		t.Fatalf("without a keyword: %v", got)
	}
	if res := call(t, st, "b__echo", `{"text":"x"}`); !res.IsError || !strings.Contains(res.Output, "not offered") {
		t.Fatalf("a filtered-out tool was called: %+v", res)
	}
	if _, ok := st.Risk("a__secret"); ok {
		t.Fatal("a filtered-out tool has a risk (would be offered)")
	}
	if res := call(t, st, "a__echo", `{"text":"in"}`); res.Output != "echo: in" {
		t.Fatalf("the always tool: %+v", res)
	}
	st = turn("please BROWSE the site")
	got := mcpOnly(specNames(st))
	if !slices.Contains(got, "a__echo") || !slices.Contains(got, "b__echo") || !slices.Contains(got, "b__secret") || slices.Contains(got, "a__secret") {
		t.Fatalf("with a keyword: %v", got)
	}
	if res := call(t, st, "b__echo", `{"text":"kw"}`); res.Output != "echo: kw" {
		t.Fatalf("the dynamic tool: %+v", res)
	}
	// No keyword in the message, or no message at all: the dynamic group stays out.
	if got := mcpOnly(specNames(m.ForAgent(ctxT(t), cfg, "x", "conv"))); !slices.Equal(got, []string{"a__echo"}) {
		t.Fatalf("no message: %v", got)
	}
	// An agent without a runtime profile, or a profile without groups: every tool.
	all := filterConfig(nil, a, b)
	if got := mcpOnly(specNames(m.ForAgent(ctxT(t), all, "x", "conv"))); len(got) < 20 || !slices.Contains(got, "b__secret") {
		t.Fatalf("no groups: %v", got)
	}
	if !slices.Contains(specNames(st), NameResources) {
		t.Fatalf("the generic tools were filtered: %v", specNames(st))
	}
}

// Under deferred loading, always groups are pre-activated: their tools are offered without a tool_search and
// not listed as deferred; the others wait for tool_search as before.
func TestToolFilterAlwaysPreActivatedWhenDeferred(t *testing.T) {
	a, b := testServer("a", nil), testServer("b", nil)
	cfg := filterConfig([]config.ToolFilterGroup{{Mode: "always", Tools: []string{"a__*"}}}, a, b)
	cfg.MCP.DeferredLoading = true
	m := New(Options{Environ: os.Environ()})
	m.Reconcile(cfg.MCP)
	t.Cleanup(m.Close)
	st := m.ForAgent(ctxT(t), cfg, "x", "conv-d")
	names := specNames(st)
	if !slices.Contains(names, NameToolSearch) || !slices.Contains(names, "a__echo") || slices.Contains(names, "b__echo") {
		t.Fatalf("deferred with an always group: %v", names)
	}
	p := st.DeferredPrompt()
	if strings.Contains(p, "a__echo") || !strings.Contains(p, "b__echo") {
		t.Fatalf("deferred prompt lists the pre-activated tools or misses the others:\n%s", p)
	}
	if res := call(t, st, "a__echo", `{"text":"pre"}`); res.Output != "echo: pre" {
		t.Fatalf("pre-activated call: %+v", res)
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// max_tool_schema_bytes bounds the MCP tool bytes (name, description, schema) one model request carries: the
// tools past it are left out of the turn, with one warning naming the count, never a failed turn; a tool left
// out is not callable. The default is 256 KiB.
func TestToolSchemaBudget(t *testing.T) {
	if got := (config.MCPConfig{}).ToolSchemaBudget(); got != 256<<10 {
		t.Fatalf("default budget %d", got)
	}
	var logs syncBuf
	a := testServer("a", nil)
	m := New(Options{Environ: os.Environ(), Logger: slog.New(slog.NewTextHandler(&logs, nil)), BackoffMin: 20 * time.Millisecond})
	t.Cleanup(m.Close)
	m.Reconcile(config.MCPConfig{Enabled: true, Servers: []config.MCPServerConfig{a}})
	full := m.ForServers(ctxT(t), []string{"a"}, "")
	var all []string
	total := 0
	for _, s := range full.Specs() {
		if strings.HasPrefix(s.Name, "a__") {
			all = append(all, s.Name)
			total += len(s.Name) + len(s.Description) + len(s.Parameters)
		}
	}
	if len(all) < 10 {
		t.Fatalf("tools %v", all)
	}
	budget := total / 2
	m.Reconcile(config.MCPConfig{Enabled: true, Servers: []config.MCPServerConfig{a}, MaxToolSchemaBytes: budget})
	st := m.ForServers(ctxT(t), []string{"a"}, "")
	used, offered := 0, 0
	for range 3 { // every model request of the turn: the same cut, one warning
		used, offered = 0, 0
		for _, s := range st.Specs() {
			if strings.HasPrefix(s.Name, "a__") {
				used += len(s.Name) + len(s.Description) + len(s.Parameters)
				offered++
			}
		}
	}
	if used > budget || offered == 0 || offered >= len(all) {
		t.Fatalf("%d of %d tools, %d bytes, budget %d", offered, len(all), used, budget)
	}
	if n := strings.Count(logs.String(), "mcp tools left out of the turn"); n != 1 {
		t.Fatalf("%d warnings, want 1:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "omitted="+strconv.Itoa(len(all)-offered)) {
		t.Fatalf("the warning does not count the omitted tools:\n%s", logs.String())
	}
	last := all[len(all)-1]
	if slices.Contains(specNames(st), last) {
		t.Fatalf("the last tool %s fits: budget too wide", last)
	}
	if res := call(t, st, last, `{}`); !res.IsError || !strings.Contains(res.Output, "not offered") {
		t.Fatalf("a tool over the budget was called: %+v", res)
	}
	if res := call(t, st, "a__echo", `{"text":"within"}`); res.Output != "echo: within" {
		t.Fatalf("a tool within the budget: %+v", res)
	}
}
