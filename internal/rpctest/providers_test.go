package rpctest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// family describes one provider wire format: its recorded text fixture, what the daemon must stream from it,
// a tool-call answer in the same format, and where the tool result sits in the follow-up request.
type family struct {
	name, contentType, path string
	text                    []byte   // recorded fixture: a plain answer
	textEvents              []string // the session/update sequence the fixture must produce, in order
	textUsage               [2]int
	textModel               string
	toolCall                func(path, content string) []byte // an answer calling file_write once
	toolUsage               [2]int
	toolResult              func(t *testing.T, body map[string]any) (callID, content string)
}

func families(t *testing.T) []family {
	answer := []string{"agent_message_chunk:Hello", "agent_message_chunk:, wor", "agent_message_chunk:ld!"}
	return []family{{
		name: "openai", contentType: ctSSE, path: "/chat/completions",
		text: fixture(t, "openai_text.sse"),
		textEvents: append([]string{"agent_thought_chunk:User greets; ", "agent_thought_chunk:answer kindly."},
			append(answer, "context_usage:19/4")...),
		textUsage: [2]int{19, 4}, textModel: "gpt-4o-mini-2024-07-18",
		toolCall: func(path, content string) []byte {
			args1, _ := json.Marshal(fmt.Sprintf(`{"path":%q,`, path))
			args2, _ := json.Marshal(fmt.Sprintf(`"content":%q}`, content))
			return openAISSE(
				`{"id":"c2","object":"chat.completion.chunk","model":"m-1","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_w1","type":"function","function":{"name":"file_write","arguments":""}}]},"finish_reason":null}]}`,
				`{"id":"c2","object":"chat.completion.chunk","model":"m-1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":`+string(args1)+`}}]},"finish_reason":null}]}`,
				`{"id":"c2","object":"chat.completion.chunk","model":"m-1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":`+string(args2)+`}}]},"finish_reason":null}]}`,
				`{"id":"c2","object":"chat.completion.chunk","model":"m-1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
				`{"id":"c2","object":"chat.completion.chunk","model":"m-1","choices":[],"usage":{"prompt_tokens":50,"completion_tokens":7,"total_tokens":57}}`,
			)
		},
		toolUsage: [2]int{50, 7},
		toolResult: func(t *testing.T, body map[string]any) (string, string) {
			last := lastMessage(t, body)
			if last["role"] != "tool" {
				t.Fatalf("openai: last message of the follow-up request is not a tool result: %v", last)
			}
			return str(last["tool_call_id"]), str(last["content"])
		},
	}, {
		name: "ollama", contentType: ctNDJSON, path: "/api/chat",
		text:       fixture(t, "ollama_text.ndjson"),
		textEvents: append([]string{"agent_thought_chunk:The user says hi."}, append(answer, "context_usage:26/5")...),
		textUsage:  [2]int{26, 5}, textModel: "qwen3:4b",
		toolCall: func(path, content string) []byte {
			args, _ := json.Marshal(map[string]string{"path": path, "content": content})
			return []byte(`{"model":"llama3.2","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"file_write","arguments":` + string(args) + `}}]},"done":false}
{"model":"llama3.2","message":{"role":"assistant","content":""},"done_reason":"stop","done":true,"prompt_eval_count":50,"eval_count":7}
`)
		},
		toolUsage: [2]int{50, 7},
		toolResult: func(t *testing.T, body map[string]any) (string, string) {
			last := lastMessage(t, body)
			if last["role"] != "tool" || last["tool_name"] != "file_write" {
				t.Fatalf("ollama: last message of the follow-up request is not a file_write result: %v", last)
			}
			return "", str(last["content"])
		},
	}, {
		name: "anthropic", contentType: ctSSE, path: "/v1/messages",
		text:       fixture(t, "anthropic_text.sse"),
		textEvents: append([]string{"agent_thought_chunk:A greeting; reply warmly."}, append(answer, "context_usage:25/12")...),
		textUsage:  [2]int{25, 12}, textModel: "claude-sonnet-4-20250514",
		toolCall: func(path, content string) []byte {
			p1, _ := json.Marshal(fmt.Sprintf(`{"path":%q,`, path))
			p2, _ := json.Marshal(fmt.Sprintf(`"content":%q}`, content))
			ev := func(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }
			return []byte(ev("message_start", `{"type":"message_start","message":{"id":"msg_w","type":"message","role":"assistant","content":[],"model":"claude-x","stop_reason":null,"usage":{"input_tokens":50,"output_tokens":1}}}`) +
				ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_w1","name":"file_write","input":{}}}`) +
				ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":`+string(p1)+`}}`) +
				ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":`+string(p2)+`}}`) +
				ev("content_block_stop", `{"type":"content_block_stop","index":0}`) +
				ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":7}}`) +
				ev("message_stop", `{"type":"message_stop"}`))
		},
		toolUsage: [2]int{50, 7},
		toolResult: func(t *testing.T, body map[string]any) (string, string) {
			last := lastMessage(t, body)
			blocks, _ := last["content"].([]any)
			if last["role"] != "user" || len(blocks) != 1 {
				t.Fatalf("anthropic: last message of the follow-up request is not one tool_result block: %v", last)
			}
			b, _ := blocks[0].(map[string]any)
			if b["type"] != "tool_result" {
				t.Fatalf("anthropic: block is %v, want a tool_result", b)
			}
			return str(b["tool_use_id"]), str(b["content"])
		},
	}}
}

func lastMessage(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	msgs, _ := body["messages"].([]any)
	if len(msgs) == 0 {
		t.Fatalf("request without messages: %v", body)
	}
	m, _ := msgs[len(msgs)-1].(map[string]any)
	return m
}

func str(v any) string { s, _ := v.(string); return s }

// Each provider family over the real socket: the fixture's chunks arrive in order as session/update events, a
// file_write tool call under "full" runs and its result goes back to the model in the family's format, and
// every provider request leaves one cost line with its token counts.
func TestProviderFamiliesOverSocket(t *testing.T) {
	t.Parallel()
	fams := families(t)
	servers := map[string]*llm{}
	var cfg strings.Builder
	cfg.WriteString("schema_version = 3\n\n[risk_profiles.full]\nlevel = \"full\"\nworkspace_only = true\n")
	for _, f := range fams {
		// Request 0: the text turn. Request 1: the tool call. Request 2: the answer after the tool result.
		s := newLLM(t, stream(f.contentType, f.text), stream(f.contentType, f.toolCall("out/"+f.name+".txt", "hi from "+f.name)), stream(f.contentType, f.text))
		servers[f.name] = s
		fmt.Fprintf(&cfg, "\n%s\n[agents.%s]\nmodel_provider = \"%s.fake\"\nrisk_profile = \"full\"\n", fakeProviderTOML(f.name, s.URL), f.name, f.name)
	}
	d := Start(t, WithConfig(cfg.String()))

	for _, f := range fams {
		t.Run(f.name, func(t *testing.T) {
			c := dialRC(t, d, "")
			srv := servers[f.name]

			// Streaming order.
			text := c.newSession(api.SessionNewParams{AgentAlias: f.name})
			tr := c.prompt(text.SessionID, "hi", hooks{})
			if tr.err != nil {
				t.Fatalf("prompt: %s", tr.err)
			}
			wantKinds(t, tr.events, append(f.textEvents, "turn_complete:completed")...)
			last := tr.events[len(tr.events)-1]
			if last.Content == nil || *last.Content != "Hello, world!" || last.Error != "" {
				t.Fatalf("turn_complete = %+v", last)
			}
			if tr.result != (api.SessionPromptResult{SessionID: text.SessionID, StopReason: api.StopEndTurn, Outcome: api.OutcomeCompleted, Content: "Hello, world!"}) {
				t.Fatalf("prompt result = %+v", tr.result)
			}

			// Tool-call round trip.
			tool := c.newSession(api.SessionNewParams{AgentAlias: f.name})
			tr = c.prompt(tool.SessionID, "write the file", hooks{})
			if tr.err != nil {
				t.Fatalf("prompt: %s", tr.err)
			}
			want := []string{fmt.Sprintf("context_usage:%d/%d", f.toolUsage[0], f.toolUsage[1]), "tool_call:file_write", "tool_result:file_write"}
			wantKinds(t, tr.events, append(append(want, f.textEvents...), "turn_complete:completed")...)
			call, res := tr.events[1], tr.events[2]
			var args map[string]string
			if err := json.Unmarshal(call.RawInput, &args); err != nil || args["path"] != "out/"+f.name+".txt" || args["content"] != "hi from "+f.name {
				t.Fatalf("tool_call raw_input = %s (%v)", call.RawInput, err)
			}
			wantOut := fmt.Sprintf("wrote %d bytes to out/%s.txt", len("hi from "+f.name), f.name)
			if res.IsError || output(t, res) != wantOut || res.ToolCallID != call.ToolCallID || call.ToolCallID == "" {
				t.Fatalf("tool_result = %+v (output %q), call id %q", res, output(t, res), call.ToolCallID)
			}
			got, err := os.ReadFile(filepath.Join(tool.WorkspaceDir, "out", f.name+".txt"))
			if err != nil || string(got) != "hi from "+f.name {
				t.Fatalf("file in workspace: %q, %v", got, err)
			}
			paths, bodies := srv.requests()
			if len(bodies) != 3 {
				t.Fatalf("provider saw %d requests, want 3", len(bodies))
			}
			for i, p := range paths {
				if p != f.path {
					t.Errorf("request %d went to %s, want %s", i, p, f.path)
				}
			}
			var follow map[string]any
			if err := json.Unmarshal(bodies[2], &follow); err != nil {
				t.Fatal(err)
			}
			id, content := f.toolResult(t, follow)
			if content != wantOut {
				t.Fatalf("follow-up request carries tool result %q, want %q", content, wantOut)
			}
			if id != "" && id != call.ToolCallID {
				t.Fatalf("follow-up request answers call %q, want %q", id, call.ToolCallID)
			}

			// Costs: one line per provider request of each session, with the backend's token counts.
			checkCosts(t, d, text.SessionID, f.name, [][2]int{f.textUsage}, f.textModel)
			checkCosts(t, d, tool.SessionID, f.name, [][2]int{f.toolUsage, f.textUsage}, "")
		})
	}
}

func checkCosts(t *testing.T, d *Daemon, sid, alias string, want [][2]int, lastModel string) {
	t.Helper()
	var mine []store.CostRecord
	for _, r := range costLines(t, d) {
		if r.SessionID == sid {
			mine = append(mine, r)
		}
	}
	if len(mine) != len(want) {
		t.Fatalf("session %s has %d cost lines, want %d: %+v", sid, len(mine), len(want), mine)
	}
	for i, r := range mine {
		u := r.Usage
		if u.InputTokens != want[i][0] || u.OutputTokens != want[i][1] || u.TotalTokens != want[i][0]+want[i][1] || r.AgentAlias != alias || r.ID == "" || u.Model == "" {
			t.Errorf("cost line %d = %+v, want tokens %v for agent %s", i, r, want[i], alias)
		}
	}
	if lastModel != "" && mine[len(mine)-1].Usage.Model != lastModel {
		t.Errorf("cost model = %q, want %q", mine[len(mine)-1].Usage.Model, lastModel)
	}
}
