package rpctest

import (
	"encoding/json"
	"testing"
)

// zcElicitationParams is zerocode's ElicitationRequestParams (apps/zerocode/src/wire.rs).
type zcElicitationParams struct {
	SessionID       string          `json:"sessionId"`
	Mode            string          `json:"mode" zc:"enum=form|url"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema"`
}

// zcElicitationShape is zerocode's ElicitationShape::from_schema: the first property is either type "array" with
// items.anyOf (multi) or type "string" with a non-empty oneOf (single); each option needs a string const (title
// defaults to it). Anything else is unparseable, and zerocode cancels the request at once.
func zcElicitationShape(schema json.RawMessage) (property string, consts, titles []string, multi, ok bool) {
	var s struct {
		Properties map[string]struct {
			Type  string            `json:"type"`
			OneOf []json.RawMessage `json:"oneOf"`
			Items *struct {
				AnyOf []json.RawMessage `json:"anyOf"`
			} `json:"items"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil || len(s.Properties) != 1 {
		return "", nil, nil, false, false
	}
	for name, p := range s.Properties {
		property = name
		var opts []json.RawMessage
		switch {
		case p.Type == "array" && p.Items != nil && p.Items.AnyOf != nil:
			opts, multi = p.Items.AnyOf, true
		case p.Type == "string" && p.OneOf != nil:
			opts = p.OneOf
		default:
			return "", nil, nil, false, false
		}
		for _, o := range opts {
			var opt struct {
				Const *string `json:"const"`
				Title *string `json:"title"`
			}
			if json.Unmarshal(o, &opt) != nil || opt.Const == nil {
				continue
			}
			title := *opt.Const
			if opt.Title != nil {
				title = *opt.Title
			}
			consts, titles = append(consts, *opt.Const), append(titles, title)
		}
		if !multi && len(consts) == 0 {
			return "", nil, nil, false, false
		}
	}
	return property, consts, titles, multi, true
}

// askTurn prompts sid with an ask_user call and answers the one elicitation/create as zerocode does: it parses
// the request with zerocode's types, picks the titles in pick, and replies with their consts. It returns the
// tool result's output.
func (c *zc) askTurn(sid, args string, pick ...string) (titles []string, output string) {
	c.t.Helper()
	c.notifyPrompt(sid, "/tool ask_user "+args)
	for {
		f := c.Frame()
		if f.Method == "elicitation/create" {
			var p zcElicitationParams
			if err := decodeZC(f.Params, &p); err != nil || p.SessionID != sid || p.Mode != "form" {
				c.t.Fatalf("zerocode cannot parse elicitation/create (%v): %s", err, f.Raw)
			}
			prop, consts, ts, multi, ok := zcElicitationShape(p.RequestedSchema)
			if !ok {
				c.t.Fatalf("zerocode cannot render this form and cancels it: %s", p.RequestedSchema)
			}
			titles = ts
			var picked []string
			for _, want := range pick {
				for i, t := range ts {
					if t == want {
						picked = append(picked, consts[i])
					}
				}
			}
			content := map[string]any{prop: picked}
			if !multi {
				content = map[string]any{prop: picked[0]}
			}
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(f.ID),
				"result": map[string]any{"action": "accept", "content": content}})
			c.Send(string(b))
			continue
		}
		if f.Method != "session/update" {
			c.t.Fatalf("during an ask_user turn: %s", f.Raw)
		}
		var u struct {
			Type      string  `json:"type"`
			Name      string  `json:"name"`
			RawOutput *string `json:"raw_output"`
		}
		_ = json.Unmarshal(f.Params, &u)
		if u.Type == "tool_result" && u.RawOutput != nil {
			output = *u.RawOutput
		}
		if u.Type == "turn_complete" {
			return titles, output
		}
	}
}

// ask_user with choices reaches zerocode as a form it renders (upstream's single- and multi-select schemas),
// and its {choice: "choice-<i>"} / {choices: [...]} answers reach the model as the choices' texts.
func TestZerocodeElicitationChoices(t *testing.T) {
	d := Start(t, WithConfig(zerocodeConfig))
	c := &zc{Client: d.Dial(t), t: t}
	c.call("initialize", map[string]any{"protocol_version": 1,
		"clientCapabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}})
	var sn zcSessionNew
	c.decode("session/new", map[string]any{"agent_alias": "default"}, &sn)

	titles, out := c.askTurn(sn.SessionID, `{"question":"color?","choices":["red","blue","red"]}`, "blue")
	if len(titles) != 3 || titles[1] != "blue" || out != "blue" {
		t.Fatalf("single-select: titles %q, tool output %q", titles, out)
	}
	titles, out = c.askTurn(sn.SessionID, `{"question":"colors?","choices":["red","green","blue"],"multi_select":true}`, "red", "blue")
	if len(titles) != 3 || out != `The user chose: ["red","blue"]` {
		t.Fatalf("multi-select: titles %q, tool output %q", titles, out)
	}
}
