package quickstart_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/quickstart"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
)

func manager(t *testing.T, text string) (*config.Manager, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := config.Open(path, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m, path
}

func raw(v any) json.RawMessage { b, _ := json.Marshal(v); return b }

func submission(risk, agent string) *api.BuilderSubmission {
	return &api.BuilderSubmission{
		ModelProvider:  api.Selector{Mode: api.SelectExisting, Value: raw("echo.default")},
		RiskProfile:    api.Selector{Mode: api.SelectFresh, Value: raw(risk)},
		RuntimeProfile: api.Selector{Mode: api.SelectFresh, Value: raw("unbounded")},
		Memory:         api.Selector{Mode: api.SelectFresh, Value: raw("none")},
		Agent:          api.QuickstartAgent{Name: agent},
	}
}

// The three presets decide as their help says: locked_down asks before every medium-risk call; balanced (the
// middle one) runs the workspace tools without asking and asks for the rest; yolo asks nothing. High-risk
// calls and writes outside the workspace stay refused under the first two.
func TestPresetsDecideAsDescribed(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	outside := filepath.Join(t.TempDir(), "x.txt")
	calls := map[string]tools.Call{
		"write in workspace":  {Name: tools.NameFileWrite, Arguments: raw(map[string]string{"path": "notes.md", "content": "x"})},
		"shell in workspace":  {Name: tools.NameShell, Arguments: raw(map[string]string{"command": "touch a.txt"})},
		"write outside":       {Name: tools.NameFileWrite, Arguments: raw(map[string]string{"path": outside, "content": "x"})},
		"schedule a job":      {Name: tools.NameCronAdd, Arguments: raw(map[string]any{"name": "j", "schedule": map[string]any{"kind": "every", "every_ms": 60000}, "command": "true"})},
		"read in workspace":   {Name: tools.NameFileRead, Arguments: raw(map[string]string{"path": "notes.md"})},
		"destroy the machine": {Name: tools.NameShell, Arguments: raw(map[string]string{"command": "rm -rf /"})},
	}
	want := map[string]map[string]tools.Verdict{
		quickstart.RiskLockedDown: {"write in workspace": tools.Ask, "shell in workspace": tools.Ask, "write outside": tools.Refuse,
			"schedule a job": tools.Ask, "read in workspace": tools.Run, "destroy the machine": tools.Refuse},
		quickstart.RiskBalanced: {"write in workspace": tools.Run, "shell in workspace": tools.Run, "write outside": tools.Refuse,
			"schedule a job": tools.Ask, "read in workspace": tools.Run, "destroy the machine": tools.Refuse},
		quickstart.RiskYolo: {"write in workspace": tools.Run, "shell in workspace": tools.Run, "write outside": tools.Run,
			"schedule a job": tools.Run, "read in workspace": tools.Run},
	}
	for preset, verdicts := range want {
		m, _ := manager(t, string(config.DefaultTOML()))
		b := &quickstart.Builder{Config: m}
		res, err := b.Apply(context.Background(), submission(preset, "a_"+preset), nil, nil)
		if err != nil || res.Kind != api.QuickstartKindApplied {
			t.Fatalf("%s: %+v %v", preset, res, err)
		}
		rp := m.Current().RiskProfiles[preset]
		pol := tools.Policy{Level: tools.Level(rp.Level), WorkspaceOnly: rp.WorkspaceOnly, AutoApprove: rp.AutoApprove,
			AlwaysAsk: rp.AlwaysAsk, ForbiddenPaths: rp.ForbiddenPaths, BlockedCommands: rp.BlockedCommands}
		for name, v := range verdicts {
			if d := pol.Decide(calls[name], ws); d.Verdict != v {
				t.Errorf("%s: %s: verdict %v (%s), want %v", preset, name, d.Verdict, d.Reason, v)
			}
		}
	}
}

// A preset whose profile already exists is reused untouched, and an apply only adds: the existing lines and
// comments of the file stay byte for byte.
func TestApplyReusesExistingPresetAndOnlyAdds(t *testing.T) {
	t.Parallel()
	text := string(config.DefaultTOML()) + "\n# mine\n[risk_profiles.balanced]\nlevel = \"readonly\" # keep\n"
	m, path := manager(t, text)
	b := &quickstart.Builder{Config: m}
	res, err := b.Apply(context.Background(), submission("balanced", "helper"), nil, nil)
	if err != nil || res.Kind != api.QuickstartKindApplied {
		t.Fatalf("%+v %v", res, err)
	}
	after, _ := os.ReadFile(path)
	old, i := strings.Split(text, "\n"), 0
	for _, line := range strings.Split(string(after), "\n") {
		if i < len(old) && line == old[i] {
			i++
		}
	}
	if i != len(old) {
		t.Fatalf("the apply changed the existing line %q:\n%s", old[i], after)
	}
	if m.Current().RiskProfiles["balanced"].Level != "readonly" {
		t.Fatal("the existing balanced profile was overwritten")
	}
}

// A file that changed after the preview was shown is not written over.
func TestApplyRefusesAFileChangedSincePreview(t *testing.T) {
	t.Parallel()
	m, path := manager(t, string(config.DefaultTOML()))
	b := &quickstart.Builder{Config: m}
	_, pv, err := b.Preview(context.Background(), submission("balanced", "helper"))
	if err != nil {
		t.Fatal(err)
	}
	edited := string(pv.Before) + "# edited meanwhile\n"
	if err := os.WriteFile(path, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Apply(context.Background(), submission("balanced", "helper"), pv.Before, nil); err == nil {
		t.Fatal("applied over a file changed since its preview")
	}
	if got, _ := os.ReadFile(path); string(got) != edited {
		t.Fatalf("the file was written:\n%s", got)
	}
}

// FuzzBuild feeds arbitrary submissions to Build: it never panics, and a plan without errors names a valid
// agent alias and writes only under the agent, provider, risk profile and onboard_state entries, each prop
// one the config accepts.
func FuzzBuild(f *testing.F) {
	f.Add(`{"model_provider":{"mode":"fresh","value":{"provider_type":"openai","alias":"w","model":"m","fields":{"uri":"http://x","api_key":"k"}}},"risk_profile":{"mode":"fresh","value":"balanced"},"runtime_profile":{"mode":"fresh","value":"unbounded"},"memory":{"mode":"fresh","value":"sqlite"},"channels":[],"agent":{"name":"a","system_prompt":"","personality_file":null}}`)
	f.Add(`{"model_provider":{"mode":"existing","value":"echo.default"},"risk_profile":{"mode":"existing","value":"supervised"},"runtime_profile":{"mode":"fresh","value":"tight"},"memory":{"mode":"existing","value":"postgres.x"},"channels":[{"mode":"fresh","value":{"channel_type":"telegram","alias":"t"}}],"peer_groups":[{"name":"g","channel":"telegram.t"}],"agent":{"name":"x\"]","system_prompt":"","personality_file":null,"personality_files":[{"filename":"SOUL.md","content":"c"}]}}`)
	f.Add(`{"model_provider":{"mode":"fresh","value":null},"risk_profile":{"mode":"nope"},"agent":{}}`)
	cfg := config.Default()
	f.Fuzz(func(t *testing.T, in string) {
		var sub api.BuilderSubmission
		if json.Unmarshal([]byte(in), &sub) != nil {
			return
		}
		plan := quickstart.Build(cfg, &sub)
		if len(plan.Errors) > 0 {
			if len(plan.Sets) != 0 {
				t.Fatalf("a plan with errors has sets: %+v", plan)
			}
			return
		}
		if err := config.CheckAlias(plan.Agent.Alias); err != nil {
			t.Fatalf("accepted agent %q: %v", plan.Agent.Alias, err)
		}
		for _, s := range plan.Sets {
			p, err := config.ParsePath(s.Prop)
			if err != nil {
				t.Fatalf("set %q: %v", s.Prop, err)
			}
			switch p[0] {
			case "agents", "providers", "risk_profiles", "onboard_state", "channels", "peer_groups":
			default:
				t.Fatalf("set outside the quickstart's sections: %q", s.Prop)
			}
			if p[0] == "agents" && p[1] != plan.Agent.Alias {
				t.Fatalf("set on another agent: %q", s.Prop)
			}
		}
	})
}
