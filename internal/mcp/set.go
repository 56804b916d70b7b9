package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
)

// NameToolSearch is the tool that activates deferred MCP tools (upstream's tool_search).
const NameToolSearch = "tool_search"

// Bounds on one tool result.
const (
	maxContentItems = 64
	defaultOutput   = 64 << 10
)

// Set is the MCP tools of one turn: the servers its agent is granted, read live, so a server that arrives
// or changes its list during the turn is seen at the next model request. It implements tools.External.
type Set struct {
	m        *Manager
	servers  []*server
	deferred bool
	conv     string // the conversation whose tool_search activations apply
	// groups are the agent's tool_filter_groups; msg the turn's user message, lower-cased (ForMessage).
	groups []config.ToolFilterGroup
	msg    string
	budget int         // max_tool_schema_bytes: the tools past it are left out of a request
	warned atomic.Bool // the omission was logged (once per turn, not at every model request)
}

var _ tools.External = (*Set)(nil)

// ForAgent returns the tools of the servers agent alias is granted in cfg (upstream's bundle resolution,
// deny by default), starting lazy servers and waiting, at most until ctx ends, for those still on their
// first start. conv names the conversation (session id) deferred activations belong to. It returns nil
// when the agent has no server.
func (m *Manager) ForAgent(ctx context.Context, cfg *config.Config, alias, conv string) *Set {
	var names []string
	for _, s := range cfg.MCPServersForAgent(alias) {
		names = append(names, s.Name)
	}
	st := m.ForServers(ctx, names, conv)
	if st != nil {
		st.groups = cfg.ToolFilterGroupsForAgent(alias)
	}
	return st
}

// ForMessage gives the set its turn's user message, which tool_filter_groups of mode dynamic match their
// keywords against (upstream's per-turn filter). Without it no dynamic group applies.
func (st *Set) ForMessage(msg string) { st.msg = strings.ToLower(msg) }

// globMatch is upstream's tool pattern: an exact name, or one * standing for any run of characters.
func globMatch(pattern, name string) bool {
	prefix, suffix, ok := strings.Cut(pattern, "*")
	if !ok {
		return pattern == name
	}
	return len(name) >= len(prefix)+len(suffix) && strings.HasPrefix(name, prefix) && strings.HasSuffix(name, suffix)
}

// included reports whether tool_filter_groups let an MCP tool into this turn (eager loading): with no group,
// every tool; otherwise one an always group matches, or a dynamic group whose keyword the message holds.
func (st *Set) included(name string) bool {
	if len(st.groups) == 0 {
		return true
	}
	for _, g := range st.groups {
		if !slices.ContainsFunc(g.Tools, func(p string) bool { return globMatch(p, name) }) {
			continue
		}
		if strings.EqualFold(g.Mode, config.ToolFilterAlways) {
			return true
		}
		for _, kw := range g.Keywords {
			if kw != "" && strings.Contains(st.msg, strings.ToLower(kw)) {
				return true
			}
		}
	}
	return false
}

// preActivated reports whether an always group matches name: under deferred loading such tools are live from
// the first turn, without a tool_search (as upstream).
func (st *Set) preActivated(name string) bool {
	for _, g := range st.groups {
		if strings.EqualFold(g.Mode, config.ToolFilterAlways) && slices.ContainsFunc(g.Tools, func(p string) bool { return globMatch(p, name) }) {
			return true
		}
	}
	return false
}

// offered returns the tools a model request of this turn carries, in order: with deferred loading the
// activated ones, otherwise those tool_filter_groups let in; then, within max_tool_schema_bytes (name,
// description and schema), the rest being left out and logged once.
func (st *Set) offered() []located {
	var active map[string]bool
	if st.deferred {
		active = st.m.active.get(st.conv)
	}
	budget := st.budget
	if budget <= 0 {
		budget = config.DefaultMCPMaxToolSchemaBytes
	}
	var out []located
	var omitted []string
	used := 0
	for _, l := range st.all() {
		if st.deferred && !active[l.t.name] && !st.preActivated(l.t.name) || !st.deferred && !st.included(l.t.name) {
			continue
		}
		cost := len(l.t.name) + len(l.t.desc) + len(l.t.schema)
		if used+cost > budget {
			omitted = append(omitted, l.t.name)
			continue
		}
		used += cost
		out = append(out, l)
	}
	if len(omitted) > 0 && !st.warned.Swap(true) {
		st.m.log.Warn("mcp tools left out of the turn: their schemas exceed max_tool_schema_bytes", "component", "mcp",
			"max_tool_schema_bytes", budget, "offered", len(out), "omitted", len(omitted), "first_omitted", omitted[0])
	}
	return out
}

// ForServers is ForAgent for an explicit list of server names.
func (m *Manager) ForServers(ctx context.Context, names []string, conv string) *Set {
	ss := m.granted(names)
	if len(ss) == 0 {
		return nil
	}
	var wg sync.WaitGroup
	for _, s := range ss {
		wg.Go(func() {
			select {
			case <-s.first:
			case <-ctx.Done():
			}
		})
	}
	wg.Wait()
	m.mu.Lock()
	deferred, budget := m.deferred, m.schemaBudget
	m.mu.Unlock()
	return &Set{m: m, servers: ss, deferred: deferred, conv: conv, budget: budget}
}

// Servers returns the names of the set's servers.
func (st *Set) Servers() []string {
	out := make([]string, len(st.servers))
	for i, s := range st.servers {
		out[i] = s.cfg.Name
	}
	return out
}

type located struct {
	s    *server
	sess *sdk.ClientSession
	t    toolEntry
}

// all returns every tool of the ready servers, in server then list order, each name once: servers whose
// names sanitise alike ("my.srv", "my_srv") would offer the same <server>__<tool>, which a provider refuses
// as a duplicate function name; a later server's tool then gets a numbered suffix, as within one server.
func (st *Set) all() []located {
	var out []located
	seen := map[string]bool{}
	for _, s := range st.servers {
		sess, ts := s.snapshot()
		for _, t := range ts {
			base := t.name
			for i := 2; seen[t.name]; i++ {
				suffix := fmt.Sprintf("_%d", i)
				t.name = truncate(base, 64-len(suffix)) + suffix
			}
			seen[t.name] = true
			out = append(out, located{s, sess, t})
		}
	}
	return out
}

func (st *Set) find(name string) (located, bool) {
	for _, l := range st.all() {
		if l.t.name == name {
			return l, true
		}
	}
	return located{}, false
}

// Specs implements tools.External: every tool, or with deferred loading tool_search and the tools it
// activated in this conversation.
func (st *Set) Specs() []tools.Spec {
	var out []tools.Spec
	if st.deferred {
		out = append(out, st.searchSpec())
	}
	for _, l := range st.offered() {
		out = append(out, tools.Spec{Name: l.t.name, Description: l.t.desc, Parameters: l.t.schema})
	}
	return append(out, st.genericSpecs()...)
}

// Risk implements tools.External: the server's configured risk (medium when unset); tool_search is low.
func (st *Set) Risk(name string) (tools.Risk, bool) {
	if st.deferred && name == NameToolSearch {
		return tools.RiskLow, true
	}
	if name == NameResources || name == NamePrompts {
		for _, g := range st.genericSpecs() {
			if g.Name == name {
				return tools.RiskLow, true // reads only
			}
		}
		return "", false
	}
	var l located
	ok := false
	for _, o := range st.offered() {
		if o.t.name == name {
			l, ok = o, true
			break
		}
	}
	if !ok {
		return "", false // not activated, filtered out or over the schema budget: not offered
	}
	switch l.s.cfg.Risk {
	case "low":
		return tools.RiskLow, true
	case "high":
		return tools.RiskHigh, true
	}
	return tools.RiskMedium, true
}

// PromptSection is the set's part of the system prompt: the pinned resources, then the deferred tools.
func (st *Set) PromptSection(ctx context.Context) string {
	parts := []string{st.pinned(ctx), st.DeferredPrompt()}
	return strings.TrimSpace(strings.Join(parts, "\n\n"))
}

// DeferredPrompt is upstream's "Deferred Tools" system prompt section listing the tools tool_search can
// activate; empty when loading is not deferred or no tool is left to activate.
func (st *Set) DeferredPrompt() string {
	if !st.deferred {
		return ""
	}
	active := st.m.active.get(st.conv)
	var b strings.Builder
	for _, l := range st.all() {
		if !active[l.t.name] && !st.preActivated(l.t.name) {
			fmt.Fprintf(&b, "%s - %s\n", l.t.name, oneLine(l.t.desc))
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "## Deferred Tools\n\nThe tools listed below are available but NOT yet loaded. To use any of them you MUST first call the `tool_search` tool to fetch their full schemas. Use `\"select:name1,name2\"` for exact tools or keywords to search. Once activated, the tools become callable for the rest of the conversation.\n\n<available-deferred-tools>\n" +
		b.String() + "</available-deferred-tools>"
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return truncate(s, 200)
}

func (st *Set) searchSpec() tools.Spec {
	return tools.Spec{Name: NameToolSearch,
		Description: "Fetch the full schemas of deferred MCP tools and activate them. query: \"select:name1,name2\" for exact names, or keywords matched against names and descriptions.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"select:name1,name2 or search keywords."},"max_results":{"type":"integer","description":"At most this many tools (default 5)."}},"required":["query"]}`)}
}

// Call implements tools.External.
func (st *Set) Call(ctx context.Context, call tools.Call, outputCap int) tools.Result {
	if outputCap <= 0 {
		outputCap = defaultOutput
	}
	if st.deferred && call.Name == NameToolSearch {
		return st.search(call)
	}
	if call.Name == NameResources || call.Name == NamePrompts {
		return st.generic(ctx, call, outputCap)
	}
	l, ok := st.find(call.Name)
	if !ok {
		return tools.Result{Output: call.Name + ": the MCP server is not connected (it may be restarting); try again later", IsError: true}
	}
	if _, offered := st.Risk(call.Name); !offered {
		return tools.Result{Output: call.Name + ": this tool is not offered in this turn (tool_filter_groups, deferred loading or max_tool_schema_bytes)", IsError: true}
	}
	args, err := callArgs(call.Arguments)
	if err != nil {
		return tools.Result{Output: fmt.Sprintf("%s: %v", call.Name, err), IsError: true}
	}
	secs := l.s.cfg.ToolTimeout()
	cctx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second)
	defer cancel()
	res, err := l.sess.CallTool(cctx, &sdk.CallToolParams{Name: l.t.remote, Arguments: args})
	switch {
	case err != nil && ctx.Err() != nil:
		return tools.Result{Output: call.Name + ": cancelled", IsError: true}
	case err != nil && errors.Is(cctx.Err(), context.DeadlineExceeded):
		// The outcome is unknown: the call is not replayed, and the server is reset (a hung server is
		// restarted) so the next call does not queue behind it.
		_ = l.sess.Close()
		return tools.Result{Output: fmt.Sprintf("MCP server `%s` timed out after %ds during tool call `%s`; outcome unknown and request was not replayed",
			l.s.cfg.Name, secs, l.t.remote), IsError: true}
	case err != nil:
		return tools.Result{Output: bound(l.s.scrub(fmt.Sprintf("MCP tool `%s` error: %v", l.t.remote, err)), outputCap), IsError: true}
	}
	text := render(res)
	if res.IsError {
		if strings.TrimSpace(text) == "" {
			text = "(no error detail returned by server)"
		}
		return tools.Result{Output: bound(l.s.scrub(text), outputCap), IsError: true}
	}
	return tools.Result{Output: bound(l.s.scrub(text), outputCap)}
}

// callArgs decodes the model's arguments as a JSON object, dropping a top-level "approved" key as upstream.
func callArgs(raw json.RawMessage) (map[string]any, error) {
	args := map[string]any{}
	if t := bytes.TrimSpace(raw); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		dec := json.NewDecoder(bytes.NewReader(t))
		dec.UseNumber()
		if err := dec.Decode(&args); err != nil {
			return nil, fmt.Errorf("invalid arguments: must be a JSON object: %v", err)
		}
	}
	delete(args, "approved")
	return args, nil
}

// render turns a result's content into text for the model: text items as they are, other items described,
// structured content when there is no content; at most maxContentItems items.
func render(res *sdk.CallToolResult) string {
	var b strings.Builder
	for i, c := range res.Content {
		if i == maxContentItems {
			fmt.Fprintf(&b, "\n[%d more content items omitted]", len(res.Content)-i)
			break
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		switch c := c.(type) {
		case *sdk.TextContent:
			b.WriteString(c.Text)
		case *sdk.ImageContent:
			fmt.Fprintf(&b, "[image %s, %d bytes]", c.MIMEType, len(c.Data))
		case *sdk.AudioContent:
			fmt.Fprintf(&b, "[audio %s, %d bytes]", c.MIMEType, len(c.Data))
		case *sdk.ResourceLink:
			fmt.Fprintf(&b, "[resource link %s]", c.URI)
		case *sdk.EmbeddedResource:
			if c.Resource != nil {
				fmt.Fprintf(&b, "[resource %s]\n%s", c.Resource.URI, c.Resource.Text)
			}
		default:
			raw, _ := json.Marshal(c)
			b.Write(raw)
		}
	}
	if len(res.Content) == 0 && res.StructuredContent != nil {
		raw, _ := json.MarshalIndent(res.StructuredContent, "", "  ")
		b.Write(raw)
	}
	return b.String()
}

// bound cuts text to max bytes (on a rune boundary) and says so. Secrets are scrubbed before: a cut can
// never leave the start of a secret that the scrubber would no longer recognise.
func bound(text string, max int) string {
	if len(text) <= max {
		return text
	}
	return truncate(text, max) + fmt.Sprintf("\n[output truncated: %d of %d bytes shown]", len(truncate(text, max)), len(text))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// search is tool_search: select:a,b activates exact names; otherwise terms are matched case-insensitively
// against name and description, ranked by hits. Activated tools stay for the conversation.
func (st *Set) search(call tools.Call) tools.Result {
	var a struct {
		Query      string `json:"query"`
		MaxResults int    `json:"max_results"`
	}
	if err := json.Unmarshal(call.Arguments, &a); err != nil || strings.TrimSpace(a.Query) == "" {
		return tools.Result{Output: "tool_search: invalid arguments: query (a string) is required", IsError: true}
	}
	if a.MaxResults <= 0 {
		a.MaxResults = 5
	}
	all := st.all()
	var picked []toolEntry
	if names, ok := strings.CutPrefix(strings.TrimSpace(a.Query), "select:"); ok {
		want := map[string]bool{}
		for _, n := range strings.Split(names, ",") {
			want[strings.TrimSpace(n)] = true
		}
		for _, l := range all {
			if want[l.t.name] {
				picked = append(picked, l.t)
			}
		}
	} else {
		terms := strings.Fields(strings.ToLower(a.Query))
		type hit struct {
			t toolEntry
			n int
		}
		var hits []hit
		for _, l := range all {
			hay := strings.ToLower(l.t.name + " " + l.t.desc)
			n := 0
			for _, term := range terms {
				if strings.Contains(hay, term) {
					n++
				}
			}
			if n > 0 {
				hits = append(hits, hit{l.t, n})
			}
		}
		sort.SliceStable(hits, func(i, j int) bool { return hits[i].n > hits[j].n })
		for _, h := range hits {
			picked = append(picked, h.t)
		}
	}
	if len(picked) > a.MaxResults {
		picked = picked[:a.MaxResults]
	}
	if len(picked) == 0 {
		return tools.Result{Output: "tool_search: no deferred tool matches " + truncate(a.Query, 200)}
	}
	var b strings.Builder
	b.WriteString("<functions>\n")
	var names []string
	for _, t := range picked {
		fn, _ := json.Marshal(map[string]any{"name": t.name, "description": t.desc, "parameters": t.schema})
		fmt.Fprintf(&b, "<function>%s</function>\n", fn)
		names = append(names, t.name)
	}
	b.WriteString("</functions>")
	st.m.active.add(st.conv, names)
	return tools.Result{Output: b.String()}
}

// Peek returns the tools of the named servers that are ready now, and their statuses, without starting any
// (GET /api/tools?agent= shows what an agent's next turn would get from the servers already up).
func (m *Manager) Peek(names []string) ([]tools.Spec, []ServerStatus) {
	all := m.Status()
	var specs []tools.Spec
	var sts []ServerStatus
	m.mu.Lock()
	var ss []*server
	for _, n := range names {
		if s, ok := m.servers[strings.ToLower(strings.TrimSpace(n))]; ok {
			ss = append(ss, s)
		}
	}
	m.mu.Unlock()
	for _, s := range ss {
		_, ts := s.snapshot()
		for _, t := range ts {
			specs = append(specs, tools.Spec{Name: t.name, Description: t.desc, Parameters: t.schema})
		}
		for _, st := range all {
			if strings.EqualFold(st.Name, s.cfg.Name) {
				sts = append(sts, st)
			}
		}
	}
	return specs, sts
}
