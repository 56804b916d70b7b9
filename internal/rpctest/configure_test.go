package rpctest

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// session/configure changes what the provider receives from the next turn on: the model and temperature
// overrides, then another configured provider (whose own model replaces the model override). A refused
// configure changes nothing.
func TestSessionConfigureChangesTheModelSent(t *testing.T) {
	t.Parallel()
	srv := newLLM(t, stream(ctSSE, openAIText(3, 1, "ok")))
	providers := fakeProviderTOML("openai", srv.URL) +
		fmt.Sprintf("\n[providers.models.openai.other]\nuri = %q\nmodel = \"other-model\"\napi_key = \"sk-test\"\n", srv.URL)
	d := Start(t, WithConfig(agentConfig(providers, "openai.fake", "supervised", "")))
	c := dialRC(t, d, "")
	sid := c.newSession(api.SessionNewParams{AgentAlias: "a"}).SessionID

	sent := func() map[string]any { // the body of the provider's last request
		t.Helper()
		_, bodies := srv.requests()
		var body map[string]any
		if err := json.Unmarshal(bodies[len(bodies)-1], &body); err != nil {
			t.Fatal(err)
		}
		return body
	}
	turn := func() map[string]any {
		t.Helper()
		if tr := c.prompt(sid, "hi", hooks{}); tr.err != nil || tr.result.Outcome != api.OutcomeCompleted {
			t.Fatalf("prompt: %v %+v", tr.err, tr.result)
		}
		return sent()
	}
	configure := func(overrides any) (api.SessionConfigureResult, *wireError) {
		t.Helper()
		var res api.SessionConfigureResult
		raw, werr := c.call(api.MethodSessionConfigure, map[string]any{"session_id": sid, "overrides": overrides})
		if werr == nil {
			if err := json.Unmarshal(raw, &res); err != nil {
				t.Fatal(err)
			}
		}
		return res, werr
	}

	if body := turn(); body["model"] != "m" || body["temperature"] != nil {
		t.Fatalf("before configure: model %v temperature %v", body["model"], body["temperature"])
	}
	res, werr := configure(map[string]any{"model": "gpt-custom", "temperature": 0.25})
	if werr != nil || res.SessionID != sid || *res.Overrides.Model != "gpt-custom" || *res.Overrides.Temperature != 0.25 || res.Overrides.ModelProvider != nil {
		t.Fatalf("configure: %+v %v", res, werr)
	}
	if body := turn(); body["model"] != "gpt-custom" || body["temperature"] != 0.25 {
		t.Fatalf("after configure: model %v temperature %v", body["model"], body["temperature"])
	}

	// Switching provider drops the model override; the temperature stays.
	res, werr = configure(map[string]any{"modelProvider": "openai.other"})
	if werr != nil || res.Overrides.Model != nil || *res.Overrides.ModelProvider != "openai.other" || *res.Overrides.Temperature != 0.25 {
		t.Fatalf("switch provider: %+v %v", res, werr)
	}
	if body := turn(); body["model"] != "other-model" || body["temperature"] != 0.25 {
		t.Fatalf("after switch: model %v temperature %v", body["model"], body["temperature"])
	}

	for _, bad := range []struct {
		overrides any
		want      string
	}{
		{map[string]any{"model": "  "}, "model must not be blank"},
		{map[string]any{"model_provider": ""}, "model_provider must not be blank"},
		{map[string]any{"temperature": "hot"}, "temperature must be a number"},
		{map[string]any{"temperature": 3}, "temperature must be between 0 and 2"},
		{map[string]any{"model_provider": "openai.nope"}, "openai.nope"},
		{map[string]any{"model_provider": "nofamily"}, "nofamily"},
		{"model", "overrides must be an object"},
	} {
		_, werr := configure(bad.overrides)
		wantErr(t, fmt.Sprint(bad.overrides), werr, api.CodeInvalidParams, bad.want)
	}
	if body := turn(); body["model"] != "other-model" {
		t.Fatalf("refused configures changed the provider: model %v", body["model"])
	}
	_, werr = c.call(api.MethodSessionConfigure, map[string]any{"session_id": "nope", "overrides": map[string]any{}})
	wantErr(t, "unknown session", werr, api.CodeSessionNotFound)
	_, werr = c.call(api.MethodSessionConfigure, map[string]any{"overrides": map[string]any{}})
	wantErr(t, "no session_id", werr, api.CodeInvalidParams, "session_id")
}
