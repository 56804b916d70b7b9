package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/cli/client"
	"github.com/zeroclaw-go/zeroclaw/internal/visible"
)

// psRow is one running turn as zeroclaw ps shows it.
type psRow struct {
	SessionID string `json:"session_id"`
	Agent     string `json:"agent"`
	Model     string `json:"model"`
	// ModelOverride: the session runs another model than its agent's (session/configure, /model in the chat).
	ModelOverride bool   `json:"model_override,omitempty"`
	TurnID        string `json:"turn_id"`
	TurnStartedAt string `json:"turn_started_at"`
	ElapsedSecs   int64  `json:"elapsed_secs"`
}

// runPs lists the turns running in the daemon (as ollama ps lists loaded models): session/list for the
// sessions whose state is running, session/state for each turn's start, config/get for the agent's model and
// session/configure without overrides for the session's own (it changes nothing). It never starts a daemon:
// none running means nothing runs.
func runPs(ctx context.Context, env Env, args []string) error {
	fs := newDaemonFlags(env, "ps", "[--config-dir DIR] [--json]")
	asJSON := fs.Bool("json", false, "print the running turns as JSON")
	c, err := fs.connect(ctx, env, args, connectRunning)
	if err != nil {
		return err
	}
	defer c.Close()
	var list api.SessionListResult
	if err := c.Call(ctx, api.MethodSessionList, api.SessionListParams{}, &list); err != nil {
		return err
	}
	now := time.Now()
	rows := []psRow{}
	models := map[string]string{}
	for _, s := range list.Sessions {
		if s.State != "running" {
			continue
		}
		var st api.SessionStateResult
		if err := c.Call(ctx, api.MethodSessionState, api.SessionIDParams{SessionID: s.SessionID}, &st); err != nil || st.State != "running" {
			continue // ended between the two calls
		}
		r := psRow{SessionID: s.SessionID, Agent: s.AgentAlias, TurnID: st.TurnID, TurnStartedAt: st.TurnStartedAt}
		if t, err := time.Parse(time.RFC3339Nano, st.TurnStartedAt); err == nil {
			r.ElapsedSecs = int64(max(now.Sub(t), 0) / time.Second)
		}
		if _, ok := models[s.AgentAlias]; !ok {
			models[s.AgentAlias] = agentModel(ctx, c, s.AgentAlias)
		}
		r.Model = models[s.AgentAlias]
		if m, ok := sessionModel(ctx, c, s.SessionID, s.AgentAlias); ok {
			r.Model, r.ModelOverride = m, true
		}
		rows = append(rows, r)
	}
	if *asJSON {
		b, _ := json.MarshalIndent(map[string]any{"turns": rows}, "", "  ")
		fmt.Fprintln(env.Stdout, string(b))
		return nil
	}
	if len(rows) == 0 {
		fmt.Fprintln(env.Stderr, env.Locale().T("cli-ps-none"))
		return nil
	}
	loc := env.Locale()
	t := newTable(env, env.Stdout, "SESSION", "AGENT", "MODEL", "TURN", "ELAPSED")
	for _, r := range rows {
		model := visible.Escape(r.Model)
		if r.ModelOverride {
			model = loc.T("cli-ps-model-override", "model", model)
		}
		t.Row(visible.Escape(r.SessionID), visible.Escape(r.Agent), model, visible.Escape(r.TurnID),
			(time.Duration(r.ElapsedSecs) * time.Second).String())
	}
	return t.Flush()
}

// sessionModel is the model a session's own overrides make it run ("family.alias/model"), and whether it has
// any: session/configure with no overrides returns them and changes nothing.
func sessionModel(ctx context.Context, c *client.Conn, sessionID, agentAlias string) (string, bool) {
	var res api.SessionConfigureResult
	if c.Call(ctx, api.MethodSessionConfigure, api.SessionConfigureParams{SessionID: sessionID}, &res) != nil {
		return "", false
	}
	ov := res.Overrides
	if ov.Model == nil && ov.ModelProvider == nil {
		return "", false
	}
	ref := ""
	if ov.ModelProvider != nil {
		ref = *ov.ModelProvider
	} else if agentAlias != "" {
		var mp api.ConfigGetResult
		if c.Call(ctx, api.MethodConfigGet, api.ConfigGetParams{Prop: "agents." + agentAlias + ".model_provider"}, &mp) == nil {
			ref, _ = mp.Value.(string)
		}
	}
	model := ""
	if ov.Model != nil {
		model = *ov.Model
	} else if ref != "" {
		var m api.ConfigGetResult
		if c.Call(ctx, api.MethodConfigGet, api.ConfigGetParams{Prop: "providers.models." + ref + ".model"}, &m) == nil {
			model, _ = m.Value.(string)
		}
	}
	switch {
	case ref == "" && model == "":
		return "-", true
	case ref == "":
		return model, true
	case model == "":
		return ref, true
	}
	return ref + "/" + model, true
}

// agentModel is the model an agent's provider names in the config ("family.alias/model"), or "-".
func agentModel(ctx context.Context, c *client.Conn, alias string) string {
	if alias == "" {
		return "-"
	}
	var mp api.ConfigGetResult
	if c.Call(ctx, api.MethodConfigGet, api.ConfigGetParams{Prop: "agents." + alias + ".model_provider"}, &mp) != nil {
		return "-"
	}
	ref, _ := mp.Value.(string)
	if ref == "" {
		return "-"
	}
	var m api.ConfigGetResult
	if c.Call(ctx, api.MethodConfigGet, api.ConfigGetParams{Prop: "providers.models." + ref + ".model"}, &m) == nil {
		if name, _ := m.Value.(string); name != "" {
			return ref + "/" + name
		}
	}
	return ref
}
