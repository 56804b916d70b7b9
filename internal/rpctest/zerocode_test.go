package rpctest

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// This file is a client written the way upstream's TUI (zerocode, apps/zerocode/src/client.rs and wire.rs of
// zeroclaw-labs/zeroclaw at 0.8.4) reads our answers. Its result types are declared below as zerocode declares
// them, with serde's rules made explicit: a field is required unless tagged zc:"opt" (serde's #[serde(default)]
// or an Option), a required field may not be null, zc:"default" is a #[serde(default)] field that is not an
// Option (absent is fine, null is refused as serde refuses it), unknown fields are ignored, unsigned counts
// reject negative numbers, and zc:"enum=a|b" restricts a string to the variants the Rust enum accepts. decodeZC enforces all of
// that, so a field we drop, rename or send with the wrong type fails here as it would fail in zerocode.

// zerocodeVersion is the release zerocode compares server_version with (its CARGO_PKG_VERSION).
const zerocodeVersion = "0.8.6"

type zcCommandDescriptor struct {
	ID      string   `json:"id"`
	Name    string   `json:"name"`
	Aliases []string `json:"aliases" zc:"opt"`
}

// zcInitialize is what parse_initialize_response reads: server_version must equal zerocode's own release,
// commands (when present) must decode as descriptors.
type zcInitialize struct {
	ServerVersion string                `json:"server_version"`
	ServerPID     *uint32               `json:"server_pid" zc:"opt"`
	TUIID         *string               `json:"tui_id" zc:"opt"`
	TUISig        *string               `json:"tui_sig" zc:"opt"`
	Commands      []zcCommandDescriptor `json:"commands" zc:"opt"`
}

type zcStatus struct {
	ServerVersion    string  `json:"server_version"`
	ProtocolVersion  uint64  `json:"protocol_version"`
	ActiveSessions   uint    `json:"active_sessions"`
	ConfigDir        *string `json:"config_dir" zc:"opt"`
	ConfigFile       *string `json:"config_file" zc:"opt"`
	ConfigKind       *string `json:"config_kind" zc:"opt,enum=default|custom|temporary"`
	LocalIPCEndpoint *string `json:"local_ipc_endpoint" zc:"opt"`
}

type zcSessionNew struct {
	SessionID    string  `json:"session_id"`
	WorkspaceDir *string `json:"workspace_dir" zc:"opt"`
}

type zcSessionEntry struct {
	SessionID    string  `json:"session_id"`
	SessionKey   string  `json:"session_key"`
	CreatedAt    string  `json:"created_at"`
	LastActivity string  `json:"last_activity"`
	MessageCount uint    `json:"message_count"`
	AgentAlias   *string `json:"agent_alias" zc:"opt"`
	ChannelID    *string `json:"channel_id" zc:"opt"`
	Name         *string `json:"name" zc:"opt"`
}

type zcSessionList struct {
	Sessions []zcSessionEntry `json:"sessions"`
}

type zcMessageEntry struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type zcSessionMessages struct {
	Messages []zcMessageEntry `json:"messages"`
	Total    uint             `json:"total" zc:"opt"`
	Start    uint             `json:"start" zc:"opt"`
}

// zcConfigFieldEntry mirrors wire.rs ConfigFieldEntry: kind, tab and alias_source are closed Rust enums.
type zcConfigFieldEntry struct {
	Path            string          `json:"path"`
	Category        string          `json:"category"`
	Kind            string          `json:"kind" zc:"enum=string|bool|integer|float|enum|alias_ref|string_array|object_array|object"`
	TypeHint        string          `json:"type_hint"`
	Value           json.RawMessage `json:"value" zc:"opt"`
	Populated       bool            `json:"populated"`
	IsSecret        bool            `json:"is_secret"`
	IsEnvOverridden bool            `json:"is_env_overridden" zc:"opt"`
	EnumVariants    []string        `json:"enum_variants" zc:"opt"`
	Description     string          `json:"description"`
	Section         *string         `json:"section" zc:"opt"`
	Tab             *string         `json:"tab" zc:"opt,enum=None|Connection|Advanced|Model|Behavior|General|Channels|Providers|Bundles|Cron|Tuning|Workspace|Memory|PeerGroups|Personality|Settings|Servers|Limits|Costs|Skills|Aliases"`
	AliasSource     *string         `json:"alias_source" zc:"opt,enum=model_providers|tts_providers|transcription_providers|channels|risk_profiles|runtime_profiles|agents|skill_bundles|knowledge_bundles|mcp_bundles"`
}

type zcConfigList struct {
	Entries []zcConfigFieldEntry `json:"entries"`
}

// zcConfigGet is upstream's ConfigGetPropResult (zerocode itself never calls config/get).
type zcConfigGet struct {
	Prop  string          `json:"prop"`
	Value json.RawMessage `json:"value"`
}

// zcEmpty is zerocode's `struct X {}` results (config/set, config/delete, session/cancel, session/approve): any
// JSON object.
type zcEmpty struct{}

type zcConfigReload struct {
	Reloading bool `json:"reloading"`
}

// zcApprove is upstream's SessionApproveResult (types.rs); zerocode only needs an object.
type zcApprove struct {
	SessionID    string `json:"session_id"`
	RequestID    string `json:"request_id"`
	Acknowledged bool   `json:"acknowledged"`
}

type zcTUIEntry struct {
	TUIID           string `json:"tui_id"`
	ConnectedAtUnix int64  `json:"connected_at_unix"`
	PeerLabel       string `json:"peer_label"`
	Transport       string `json:"transport" zc:"opt"`
}

type zcTUIList struct {
	TUIs []zcTUIEntry `json:"tuis"`
}

type zcAgentStatusEntry struct {
	Alias             string   `json:"alias"`
	Enabled           bool     `json:"enabled"`
	LiveSessions      uint     `json:"live_sessions" zc:"opt"`
	PersistedSessions uint     `json:"persisted_sessions" zc:"opt"`
	Channels          []string `json:"channels" zc:"opt"`
}

type zcAgentsStatus struct {
	Agents []zcAgentStatusEntry `json:"agents"`
}

// session/update events as parse_session_update reads them: a missing required field drops the event (the TUI
// would never see it), so each type's required fields are required here.
type zcUpdateHead struct {
	Type      string `json:"type"`
	SessionID string `json:"session_id"`
}

type zcChunk struct {
	Text string `json:"text"`
}

type zcToolCall struct {
	ToolCallID string          `json:"tool_call_id"`
	Name       string          `json:"name"`
	RawInput   json.RawMessage `json:"raw_input"`
}

type zcToolResult struct {
	ToolCallID string `json:"tool_call_id"`
	RawOutput  string `json:"raw_output"`
}

type zcApprovalRequest struct {
	RequestID        string `json:"request_id"`
	ToolName         string `json:"tool_name"`
	ArgumentsSummary string `json:"arguments_summary"`
	TimeoutSecs      uint64 `json:"timeout_secs"`
}

type zcContextUsage struct {
	InputTokens      *uint64 `json:"input_tokens" zc:"opt"`
	MaxContextTokens *uint64 `json:"max_context_tokens" zc:"opt"`
}

type zcHistoryTrimmed struct {
	DroppedMessages uint64 `json:"dropped_messages"`
	KeptTurns       uint64 `json:"kept_turns"`
	Reason          string `json:"reason"`
}

type zcTurnComplete struct {
	Outcome string  `json:"outcome" zc:"enum=completed|cancelled|failed"`
	Content *string `json:"content" zc:"opt"`
}

type zcPlanEntry struct {
	Content    string  `json:"content"`
	Status     *string `json:"status" zc:"opt,enum=pending|in_progress|completed"`
	Priority   *string `json:"priority" zc:"opt,enum=high|medium|low"`
	ActiveForm *string `json:"activeForm" zc:"opt"`
}

type zcPlan struct {
	Entries []zcPlanEntry `json:"entries"`
}

// decodeZC decodes raw into out with serde's strictness for out's declared fields (see the file comment).
func decodeZC(raw json.RawMessage, out any) error {
	if err := json.Unmarshal(raw, out); err != nil {
		return err
	}
	return checkZC("$", raw, reflect.TypeOf(out).Elem())
}

func checkZC(at string, raw json.RawMessage, t reflect.Type) error {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
			return fmt.Errorf("%s: want an object, got %s", at, raw)
		}
		for i := range t.NumField() {
			f := t.Field(i)
			name := strings.Split(f.Tag.Get("json"), ",")[0]
			opt, enum := zcTag(f.Tag.Get("zc"))
			dflt := slices.Contains(strings.Split(f.Tag.Get("zc"), ","), "default")
			v, present := obj[name]
			if present && string(v) == "null" && dflt {
				return fmt.Errorf("%s.%s: null, which serde's #[serde(default)] on a non-Option field refuses", at, name)
			}
			if !present || string(v) == "null" {
				if !opt && !dflt {
					return fmt.Errorf("%s.%s: required, got %s", at, name, orAbsent(v, present))
				}
				continue
			}
			if enum != nil {
				var s string
				if err := json.Unmarshal(v, &s); err != nil || !slices.Contains(enum, s) {
					return fmt.Errorf("%s.%s: %s is not one of %v", at, name, v, enum)
				}
			}
			if err := checkZC(at+"."+name, v, f.Type); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 { // json.RawMessage: any value
			return nil
		}
		var arr []json.RawMessage
		if err := json.Unmarshal(raw, &arr); err != nil {
			return fmt.Errorf("%s: want an array, got %s", at, raw)
		}
		for i, e := range arr {
			if string(e) == "null" {
				return fmt.Errorf("%s[%d]: null element", at, i)
			}
			if err := checkZC(fmt.Sprintf("%s[%d]", at, i), e, t.Elem()); err != nil {
				return err
			}
		}
	}
	return nil
}

func zcTag(tag string) (opt bool, enum []string) {
	for part := range strings.SplitSeq(tag, ",") {
		switch {
		case part == "opt":
			opt = true
		case strings.HasPrefix(part, "enum="):
			enum = strings.Split(strings.TrimPrefix(part, "enum="), "|")
		}
	}
	return opt, enum
}

func orAbsent(v json.RawMessage, present bool) string {
	if !present {
		return "absent"
	}
	return string(v)
}

// TestDecodeZCIsStrict shows the checker fails where serde would.
func TestDecodeZCIsStrict(t *testing.T) {
	t.Parallel()
	bad := map[string]string{
		"missing required":  `{"sessions":[{"session_id":"a","created_at":"t","last_activity":"t","message_count":1}]}`,
		"null required":     `{"sessions":[{"session_id":"a","session_key":null,"created_at":"t","last_activity":"t","message_count":1}]}`,
		"negative unsigned": `{"sessions":[{"session_id":"a","session_key":"a","created_at":"t","last_activity":"t","message_count":-1}]}`,
		"not an array":      `{"sessions":{}}`,
	}
	for name, raw := range bad {
		var r zcSessionList
		if err := decodeZC(json.RawMessage(raw), &r); err == nil {
			t.Errorf("%s: decoded %s", name, raw)
		}
	}
	var e zcConfigList
	if err := decodeZC(json.RawMessage(`{"entries":[{"path":"a","category":"A","kind":"text","type_hint":"x","populated":true,"is_secret":false,"description":"d"}]}`), &e); err == nil {
		t.Error("an unknown PropKind variant decoded")
	}
	var ok zcSessionList
	if err := decodeZC(json.RawMessage(`{"sessions":[{"session_id":"a","session_key":"a","created_at":"t","last_activity":"t","message_count":1,"agent_alias":null,"extra":[1]}],"more":true}`), &ok); err != nil {
		t.Errorf("unknown fields and a null optional must decode: %v", err)
	}
}

// zc is the zerocode-shaped connection: string ids "zc-out-N", requests answered in order, notifications
// collected.
type zc struct {
	*Client
	t       *testing.T
	next    int
	pending map[string]func(json.RawMessage, *wireError) // requests sent during a turn, by id
}

// request sends a request whose response is routed by id to onResult while a turn streams (as zerocode's
// reader does); turnEvents delivers it.
func (c *zc) request(method string, params any, onResult func(json.RawMessage, *wireError)) {
	id := fmt.Sprintf("zc-out-%d", c.next)
	c.next++
	if c.pending == nil {
		c.pending = map[string]func(json.RawMessage, *wireError){}
	}
	c.pending[id] = onResult
	c.Request(method, params, id)
}

func (c *zc) call(method string, params any) json.RawMessage {
	c.t.Helper()
	res, werr := c.tryCall(method, params)
	if werr != nil {
		c.t.Fatalf("%s: error %d %s", method, werr.Code, werr.Message)
	}
	return res
}

func (c *zc) tryCall(method string, params any) (json.RawMessage, *wireError) {
	c.t.Helper()
	id := fmt.Sprintf("zc-out-%d", c.next)
	c.next++
	c.Request(method, params, id)
	f := c.Frame()
	if f.Method != "" || idOf(f) != id {
		c.t.Fatalf("%s: expected the response to %s, got %s", method, id, f.Raw)
	}
	return f.Result, f.Error
}

// decode is call + decodeZC into out.
func (c *zc) decode(method string, params, out any) {
	c.t.Helper()
	res := c.call(method, params)
	if err := decodeZC(res, out); err != nil {
		c.t.Fatalf("zerocode cannot parse the %s result: %v\n%s", method, err, res)
	}
}

// notifyPrompt sends session/prompt as zerocode does: a notification, no id.
func (c *zc) notifyPrompt(sid, prompt string) {
	c.t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "session/prompt",
		"params": map[string]any{"session_id": sid, "prompt": prompt}})
	c.Send(string(b))
}

// turnEvents reads session/update notifications until turn_complete, checking every event parses as zerocode
// parses it. onApproval is called for each approval_request. Any response frame fails: a notification gets none.
func (c *zc) turnEvents(sid string, onApproval func(zcApprovalRequest)) (types []string, done zcTurnComplete, usage []zcContextUsage) {
	c.t.Helper()
	for {
		f := c.Frame()
		if on, ok := c.pending[idOf(f)]; ok && f.Method == "" {
			delete(c.pending, idOf(f))
			on(f.Result, f.Error)
			continue
		}
		if f.Method != "session/update" {
			c.t.Fatalf("during a turn: want only session/update notifications, got %s", f.Raw)
		}
		var head zcUpdateHead
		if err := decodeZC(f.Params, &head); err != nil {
			c.t.Fatalf("session/update: %v: %s", err, f.Raw)
		}
		if head.SessionID != sid {
			c.t.Fatalf("session/update for %q, want %q", head.SessionID, sid)
		}
		types = append(types, head.Type)
		var into any
		switch head.Type {
		case "agent_message_chunk", "agent_thought_chunk":
			into = &zcChunk{}
		case "tool_call":
			into = &zcToolCall{}
		case "tool_result":
			into = &zcToolResult{}
		case "approval_request":
			into = &zcApprovalRequest{}
		case "context_usage":
			into = &zcContextUsage{}
		case "history_trimmed":
			into = &zcHistoryTrimmed{}
		case "plan":
			into = &zcPlan{}
		case "turn_complete":
			into = &done
		default:
			c.t.Fatalf("session/update type %q is not one zerocode knows: %s", head.Type, f.Raw)
		}
		if err := decodeZC(f.Params, into); err != nil {
			c.t.Fatalf("zerocode drops this %s event: %v\n%s", head.Type, err, f.Raw)
		}
		switch v := into.(type) {
		case *zcApprovalRequest:
			onApproval(*v)
		case *zcContextUsage:
			usage = append(usage, *v)
		}
		if head.Type == "turn_complete" {
			for len(c.pending) > 0 { // an answer may follow the turn's end
				f := c.Frame()
				on, ok := c.pending[idOf(f)]
				if !ok || f.Method != "" {
					c.t.Fatalf("after turn_complete: want the pending responses, got %s", f.Raw)
				}
				delete(c.pending, idOf(f))
				on(f.Result, f.Error)
			}
			return types, done, usage
		}
	}
}

const zerocodeConfig = `schema_version = 3

[providers.models.echo.default]
model = "echo"
context_window = 32000

[providers.models.openai.spare]
model = "gpt-4o-mini"
api_key = "sk-zerocode-secret"

[agents.default]
model_provider = "echo.default"
risk_profile = "supervised"

[risk_profiles.supervised]
level = "supervised"
workspace_only = true
`

// seedUpstreamRows writes, before the daemon starts, a channel session (no agent, a channel id) and an orphan
// (neither): upstream lists the first and hides the second.
func seedUpstreamRows(t *testing.T, cfgDir string) {
	t.Helper()
	path := filepath.Join(cfgDir, "data", "sessions", "sessions.db")
	chat, err := store.OpenChat(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, key := range []string{"telegram_42", "orphan_1"} {
		if _, err := chat.Append(t.Context(), key, "user", "hello from "+key, at); err != nil {
			t.Fatal(err)
		}
	}
	if err := chat.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE session_metadata SET channel_id = 'telegram' WHERE session_key = 'telegram_42'`); err != nil {
		t.Fatal(err)
	}
}

// TestZerocodeSession drives a whole zerocode-shaped session over the socket and decodes every answer with
// zerocode's types.
func TestZerocodeSession(t *testing.T) {
	t.Parallel()
	cfgDir := filepath.Join(ShortTempDir(t), "install")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	seedUpstreamRows(t, cfgDir)
	d := StartOn(t, cfgDir, WithConfig(zerocodeConfig))
	c := &zc{Client: d.Dial(t), t: t}

	// Handshake, with zerocode's params.
	var ini zcInitialize
	c.decode("initialize", map[string]any{"protocol_version": 1,
		"clientCapabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}}},
		"env":                map[string]string{"TERM": "xterm-256color"}}, &ini)
	if ini.ServerVersion != zerocodeVersion {
		t.Fatalf("server_version = %q: zerocode %s refuses the daemon", ini.ServerVersion, zerocodeVersion)
	}
	if ini.TUIID == nil || !regexp.MustCompile(`^tui_[0-9a-f]{8}$`).MatchString(*ini.TUIID) {
		t.Fatalf("tui_id = %v, want tui_ + 8 hex digits", ini.TUIID)
	}
	var names []string
	for _, cmd := range ini.Commands {
		names = append(names, cmd.ID+"="+cmd.Name+"/"+strings.Join(cmd.Aliases, ","))
	}
	if want := []string{"help=help/", "new=new/new-session", "model=model/"}; !slices.Equal(names, want) {
		t.Fatalf("initialize.commands = %q, want the TUI commands %q", names, want)
	}
	var raw map[string]any
	_ = json.Unmarshal(c.call("initialize", map[string]any{"protocol_version": 1, "tui_id": *ini.TUIID}), &raw)
	if bv, _ := raw["build_version"].(string); bv == "" || bv == zerocodeVersion {
		t.Errorf("build_version = %v, want our own build", raw["build_version"])
	}

	var st zcStatus
	c.decode("status", map[string]any{}, &st)
	if st.ConfigFile == nil || *st.ConfigFile != filepath.Join(cfgDir, "config.toml") || st.ConfigKind == nil {
		t.Errorf("status config_file = %v, config_kind = %v", st.ConfigFile, st.ConfigKind)
	}

	// New session as zerocode sends it: nulls for what it does not know.
	var sn zcSessionNew
	c.decode("session/new", map[string]any{"agent_alias": "default", "cwd": nil, "session_id": nil, "tui_id": *ini.TUIID}, &sn)
	sid := sn.SessionID

	// Prompt as a notification: the turn streams, no response comes.
	c.notifyPrompt(sid, "hello zerocode")
	types, done, usage := c.turnEvents(sid, func(a zcApprovalRequest) { t.Fatalf("unexpected approval request %+v", a) })
	if done.Outcome != "completed" || done.Content == nil || *done.Content != "hello zerocode" {
		t.Fatalf("turn_complete = %+v (events %q)", done, types)
	}
	if len(usage) == 0 || usage[0].MaxContextTokens == nil || *usage[0].MaxContextTokens != 32000 {
		t.Fatalf("context_usage = %+v, want max_context_tokens 32000 from the provider's context_window", usage)
	}

	// A tool call that asks first: approve it from the TUI.
	var asked []zcApprovalRequest
	c.notifyPrompt(sid, `/tool shell {"command":"echo approved"}`)
	types, done, _ = c.turnEvents(sid, func(a zcApprovalRequest) {
		asked = append(asked, a)
		c.request("session/approve", map[string]any{"session_id": sid, "request_id": a.RequestID, "decision": "allow_once"},
			func(res json.RawMessage, werr *wireError) {
				var ack zcApprove
				if werr != nil {
					t.Fatalf("session/approve: %d %s", werr.Code, werr.Message)
				}
				if err := decodeZC(res, &ack); err != nil || !ack.Acknowledged {
					t.Fatalf("session/approve answered %s (%v)", res, err)
				}
			})
	})
	if len(asked) != 1 || done.Outcome != "completed" || !slices.Contains(types, "tool_call") || !slices.Contains(types, "tool_result") {
		t.Fatalf("approved tool turn: asked %+v, events %q, done %+v", asked, types, done)
	}
	var late zcApprove
	c.decode("session/approve", map[string]any{"session_id": sid, "request_id": asked[0].RequestID, "decision": "allow_once"}, &late)
	if late.Acknowledged {
		t.Error("approving an already answered request is acknowledged")
	}
	c.decode("session/approve", map[string]any{"session_id": "no-such-session", "request_id": "r-1", "decision": "reject"}, &late)
	if late.Acknowledged {
		t.Error("approving on an unknown session is acknowledged")
	}

	// A prompt for an unknown session: exactly one failed turn_complete, so the TUI leaves its working state.
	c.notifyPrompt("no-such-session", "hi")
	if _, done, _ := c.turnEvents("no-such-session", nil); done.Outcome != "failed" {
		t.Fatalf("unknown session: turn_complete %+v, want failed", done)
	}

	// The session list: ours, the channel row, never the orphan.
	var sl zcSessionList
	c.decode("session/list", map[string]any{"query": nil}, &sl)
	byID := map[string]zcSessionEntry{}
	for _, s := range sl.Sessions {
		byID[s.SessionID] = s
	}
	ours, ok := byID[sid]
	if !ok || ours.SessionKey == "" || ours.AgentAlias == nil || *ours.AgentAlias != "default" {
		t.Errorf("session/list entry for %s: %+v", sid, ours)
	}
	if s, ok := byID["telegram_42"]; !ok || s.ChannelID == nil || *s.ChannelID != "telegram" || s.SessionKey != "telegram_42" {
		t.Errorf("session/list channel row: %+v (present %v)", s, ok)
	}
	if _, ok := byID["orphan_1"]; ok {
		t.Error("session/list shows a row with neither agent nor channel")
	}

	var msgs zcSessionMessages
	c.decode("session/messages", map[string]any{"session_id": sid}, &msgs)
	total := msgs.Total
	if total < 4 || total != ours.MessageCount || msgs.Start != 0 || len(msgs.Messages) != int(total) || msgs.Messages[0].Content != "hello zerocode" {
		t.Errorf("session/messages = %+v (session/list counts %d)", msgs, ours.MessageCount)
	}
	c.decode("session/messages", map[string]any{"session_id": sid, "limit": 1, "before_index": 3}, &msgs)
	if msgs.Total != total || msgs.Start != 2 || len(msgs.Messages) != 1 {
		t.Errorf("session/messages page = %+v", msgs)
	}
	c.decode("session/messages", map[string]any{"session_id": "no-such-session"}, &msgs)
	if len(msgs.Messages) != 0 || msgs.Total != 0 {
		t.Errorf("session/messages of an unknown id = %+v, want empty", msgs)
	}

	// The config explorer.
	var cl zcConfigList
	c.decode("config/list", map[string]any{"prefix": nil}, &cl)
	entries := map[string]zcConfigFieldEntry{}
	for _, e := range cl.Entries {
		if e.Description == "" {
			t.Errorf("config/list %s has no description", e.Path)
		}
		entries[e.Path] = e
	}
	checkEntry := func(path, kind, category string, populated bool) zcConfigFieldEntry {
		t.Helper()
		e, ok := entries[path]
		if !ok {
			t.Fatalf("config/list has no %s", path)
		}
		if e.Kind != kind || e.Category != category || e.Populated != populated {
			t.Errorf("%s: kind %s category %s populated %v, want %s %s %v", path, e.Kind, e.Category, e.Populated, kind, category, populated)
		}
		return e
	}
	checkEntry("gateway.port", "integer", "Gateway", true)
	checkEntry("gateway.require_pairing", "bool", "Gateway", true)
	checkEntry("schema_version", "integer", "Core", true)
	if e := checkEntry("providers.models.openai.spare.api_key", "string", "Providers", true); !e.IsSecret || e.Value != nil {
		t.Errorf("secret entry %+v: want is_secret and no value", e)
	}
	if e := checkEntry("providers.models.echo.default.api_key", "string", "Providers", false); !e.IsSecret || e.Value != nil {
		t.Errorf("unset secret entry %+v", e)
	}
	if e := checkEntry("agents.default.model_provider", "alias_ref", "Agents", true); e.AliasSource == nil || *e.AliasSource != "model_providers" {
		t.Errorf("agents.default.model_provider alias_source = %v", e.AliasSource)
	}
	if e := checkEntry("risk_profiles.supervised.level", "enum", "Risk profiles", true); !slices.Equal(e.EnumVariants, []string{"readonly", "supervised", "full"}) {
		t.Errorf("level enum_variants = %q", e.EnumVariants)
	}
	if e := checkEntry("risk_profiles.supervised.auto_approve", "string_array", "Risk profiles", false); string(e.Value) != "[]" {
		t.Errorf("auto_approve value = %s", e.Value)
	}

	var cg zcConfigGet
	c.decode("config/get", map[string]any{"prop": "gateway.port"}, &cg)
	if cg.Prop != "gateway.port" || string(cg.Value) != "42617" {
		t.Errorf("config/get = %+v", cg)
	}
	var empty zcEmpty
	c.decode("config/set", map[string]any{"prop": "agents.default.system_prompt", "value": "Be brief."}, &empty)
	var rl zcConfigReload
	c.decode("config/reload", map[string]any{}, &rl)
	if !rl.Reloading {
		t.Error("config/reload: reloading is false")
	}

	var tl zcTUIList
	c.decode("tui/list", map[string]any{}, &tl)
	found := false
	for _, e := range tl.TUIs {
		if e.TUIID == *ini.TUIID {
			found = true
			if e.ConnectedAtUnix <= 0 || e.Transport != "unix" {
				t.Errorf("tui/list entry %+v", e)
			}
		}
	}
	if !found {
		t.Errorf("tui/list %+v lacks %s", tl, *ini.TUIID)
	}

	// Methods zerocode calls that arrive with later issues are checked as soon as the daemon offers them.
	var caps struct {
		Capabilities []string `json:"capabilities"`
	}
	_ = json.Unmarshal(c.call("initialize", map[string]any{"protocol_version": 1, "tui_id": *ini.TUIID}), &caps)
	if slices.Contains(caps.Capabilities, "agents/status") {
		var as zcAgentsStatus
		c.decode("agents/status", map[string]any{}, &as)
	}
}
