package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/provider"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
)

// chattyProvider answers every request with a tool call preceded by text, so a turn spends its text budget
// over several model requests.
type chattyProvider struct {
	n    int
	reqs []provider.Limits
}

func (p *chattyProvider) Alias() string { return "test.chatty" }
func (p *chattyProvider) Stream(ctx context.Context, req provider.Request, emit func(provider.Event)) (provider.Result, error) {
	p.n++
	p.reqs = append(p.reqs, req.Limits)
	echo, _ := provider.New(provider.Settings{Family: provider.FamilyEcho, Alias: "chatty"})
	res, err := echo.Stream(ctx, provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Content: strings.Repeat("abcd ", 40)}},
		Limits: req.Limits}, emit)
	if err != nil {
		return res, err
	}
	res.ToolCalls = []provider.ToolCall{{ID: "c" + string(rune('0'+p.n)), Name: "time", Arguments: []byte(`{}`)}}
	return res, nil
}

// The answer budget is per turn: each model request gets what is left of it, and the request that passes it
// ends the turn failed, with an error naming the config key, the capped text as content and stored.
func TestAnswerLimitSpansTheTurn(t *testing.T) {
	h := newHarness(t)
	p := &chattyProvider{}
	tr := h.turn(p, tools.Policy{Level: tools.LevelFull}, nil)
	tr.Limits = Limits{MaxAnswerBytes: 500, MaxToolArgsBytes: 100, MaxToolCalls: 2}
	outcome, content, err := tr.Run(t.Context(), "go")
	if outcome != api.OutcomeFailed || err == nil {
		t.Fatalf("Run = %q, %v", outcome, err)
	}
	for _, want := range []string{"limits.max_answer_bytes", "500 bytes", "test.chatty"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// 200 bytes per request: two whole, then 100 of the third.
	if p.n != 3 || p.reqs[0].MaxTextBytes != 500 || p.reqs[1].MaxTextBytes != 300 || p.reqs[2].MaxTextBytes != 100 {
		t.Fatalf("requests %d with limits %+v", p.n, p.reqs)
	}
	if p.reqs[0].MaxToolArgBytes != 100 || p.reqs[0].MaxToolCalls != 2 {
		t.Fatalf("tool limits not passed on: %+v", p.reqs[0])
	}
	if len(content) != 100 {
		t.Fatalf("content %d bytes, want the 100 that fit", len(content))
	}
	msgs, err := h.chat.All(t.Context(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	last := msgs[len(msgs)-1]
	if last.Role != provider.RoleAssistant || last.Content != content {
		t.Fatalf("last stored message %s %q, want the capped answer", last.Role, last.Content)
	}
	var streamed int
	for _, ev := range h.find(api.UpdateAgentMessageChunk) {
		streamed += len(ev.Text)
	}
	if streamed != 500 {
		t.Fatalf("%d bytes of chunks streamed, want exactly the 500 of the budget", streamed)
	}
}

// A tool-arguments or tool-rounds limit ends the turn with an error naming its key; a call over the arguments
// limit is never announced or run.
func TestToolLimitsNameTheirKey(t *testing.T) {
	h := newHarness(t)
	p, _ := provider.New(provider.Settings{Family: provider.FamilyEcho})
	tr := h.turn(p, tools.Policy{Level: tools.LevelFull}, nil)
	tr.Limits = Limits{MaxToolArgsBytes: 5}
	outcome, _, err := tr.Run(t.Context(), `/tool time {"zone":"UTC"}`)
	if outcome != api.OutcomeFailed || err == nil || !strings.Contains(err.Error(), "limits.max_tool_args_bytes") {
		t.Fatalf("Run = %q, %v", outcome, err)
	}
	if len(h.find(api.UpdateToolCall)) != 0 {
		t.Fatal("a call over the limit was announced")
	}

	h = newHarness(t)
	tr = h.turn(&loopProvider{}, tools.Policy{Level: tools.LevelFull}, nil)
	tr.Limits = Limits{MaxToolRounds: 2}
	if _, _, err := tr.Run(t.Context(), "go"); err == nil || !strings.Contains(err.Error(), "limits.max_tool_rounds") {
		t.Fatalf("rounds: %v", err)
	}
}
