package rpctest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// zerocode's SOP pane types (apps/zerocode/src/client.rs SopRunSummaryView, sop_pane.rs RunOverlayView and
// OverlayNodeView at upstream's HEAD), as in zerocode_test.go. zerocode marks them #[serde(default)]; they are
// declared required here because upstream's daemon always sends them, so dropping one is a wire change.

type zcSopRunSummary struct {
	RunID         string  `json:"run_id"`
	SopName       string  `json:"sop_name"`
	Status        string  `json:"status" zc:"enum=pending|running|waiting_approval|paused_checkpoint|completed|failed|cancelled"`
	CurrentStep   uint32  `json:"current_step"`
	TotalSteps    uint32  `json:"total_steps"`
	StartedAt     string  `json:"started_at"`
	CompletedAt   *string `json:"completed_at" zc:"opt"`
	TriggerSource string  `json:"trigger_source"`
	Active        bool    `json:"active"`
}

type zcSopRuns struct {
	Runs []zcSopRunSummary `json:"runs"`
}

type zcSopRun struct {
	RunID string `json:"run_id"`
}

type zcOverlayCall struct {
	Index      uint64 `json:"index"`
	Tool       string `json:"tool"`
	Success    bool   `json:"success"`
	DurationMS uint64 `json:"duration_ms"`
}

type zcOverlayNode struct {
	Step      uint64          `json:"step"`
	State     string          `json:"state" zc:"enum=pending|active|completed|failed|skipped"`
	ToolCalls []zcOverlayCall `json:"tool_calls" zc:"opt"`
}

type zcRunOverlay struct {
	Status      string          `json:"status"`
	CurrentStep uint64          `json:"current_step"`
	TotalSteps  uint64          `json:"total_steps"`
	Waiting     bool            `json:"waiting"`
	Paused      bool            `json:"paused"`
	Nodes       []zcOverlayNode `json:"nodes"`
}

// zcSopNamed is what the pane's refresh reads of sops/list (a bare array); zcSopDraft is client.rs's SopDraft,
// which its manual-run check (and its editor) decodes from sops/get: a SOP that fails to decode cannot be run
// from the pane ("selected SOP has no manual trigger").
type zcSopNamed struct {
	Name string `json:"name"`
}

type zcSopTriggerDraft struct {
	Type           string   `json:"type"`
	Channel        *string  `json:"channel" zc:"opt"`
	Alias          *string  `json:"alias" zc:"opt"`
	Path           *string  `json:"path" zc:"opt"`
	Expression     *string  `json:"expression" zc:"opt"`
	Topic          *string  `json:"topic" zc:"opt"`
	Condition      *string  `json:"condition" zc:"opt"`
	Events         []string `json:"events" zc:"default"`
	CalendarSource *string  `json:"calendar_source" zc:"opt"`
	CalendarIDs    []string `json:"calendar_ids" zc:"default"`
}

type zcSwitchRule struct {
	Name string  `json:"name"`
	When *string `json:"when" zc:"opt"`
	Goto *uint32 `json:"goto" zc:"opt"`
}

type zcStepRouting struct {
	When      *string        `json:"when" zc:"opt"`
	Next      *uint32        `json:"next" zc:"opt"`
	Terminal  bool           `json:"terminal" zc:"default"`
	DependsOn []uint32       `json:"depends_on" zc:"default"`
	Switch    []zcSwitchRule `json:"switch" zc:"default"`
}

type zcPlannedCall struct {
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args" zc:"opt"`
	Pinned json.RawMessage `json:"pinned" zc:"opt"`
}

type zcStepPos struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

type zcSopStep struct {
	Number               uint32          `json:"number"`
	Title                string          `json:"title"`
	Body                 string          `json:"body"`
	SuggestedTools       []string        `json:"suggested_tools" zc:"default"`
	RequiresConfirmation bool            `json:"requires_confirmation" zc:"default"`
	Kind                 string          `json:"kind" zc:"default,enum=execute|checkpoint|capability"`
	Routing              zcStepRouting   `json:"routing" zc:"default"`
	OnFailure            json.RawMessage `json:"on_failure" zc:"default"`
	Calls                []zcPlannedCall `json:"calls" zc:"default"`
	Schema               json.RawMessage `json:"schema" zc:"opt"`
	Scope                json.RawMessage `json:"scope" zc:"opt"`
	Mode                 json.RawMessage `json:"mode" zc:"opt"`
	Agent                json.RawMessage `json:"agent" zc:"opt"`
	Pos                  *zcStepPos      `json:"pos" zc:"opt"`
}

type zcSopDraft struct {
	Name          string              `json:"name"`
	Description   string              `json:"description"`
	Version       string              `json:"version"`
	Priority      string              `json:"priority"`
	ExecutionMode string              `json:"execution_mode"`
	Triggers      []zcSopTriggerDraft `json:"triggers"`
	Steps         []zcSopStep         `json:"steps"`
	CooldownSecs  uint64              `json:"cooldown_secs"`
	MaxConcurrent uint32              `json:"max_concurrent"`
	Deterministic bool                `json:"deterministic"`
	Agent         json.RawMessage     `json:"agent" zc:"opt"`
}

// sopInstall writes a supervised two-step SOP "deploy" (manual trigger) under <install>/shared/sops and the
// [sop] table that turns the runtime on.
func sopInstall(t *testing.T, cfgDir string) string {
	t.Helper()
	dir := filepath.Join(cfgDir, "shared", "sops", "deploy")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	toml := "[sop]\nname = \"deploy\"\ndescription = \"Ship a build\"\nexecution_mode = \"supervised\"\n\n[[triggers]]\ntype = \"manual\"\n"
	md := "# Deploy\n\n## Steps\n\n1. **Check** — Say that the build is fine.\n2. **Ship** — Say that it shipped.\n"
	for name, body := range map[string]string{"SOP.toml": toml, "SOP.md": md} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return zerocodeConfig + "\n[sop]\nsops_dir = \"shared/sops\"\n"
}

// zerocode's SOP pane against the real daemon: its manual run (payload null), its 2 s sops/runs poll
// (sop null), the overlay it draws, and its approve ("approve") and deny ({"deny":{}}) all parse as zerocode
// reads them, and the run they steer ends as they asked.
func TestZerocodeSopPane(t *testing.T) {
	cfgDir := filepath.Join(ShortTempDir(t), "install")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := sopInstall(t, cfgDir)
	// A second SOP with the step fields the pane's editor reads (suggested tools, on_failure's tagged form).
	rel := filepath.Join(cfgDir, "shared", "sops", "release")
	if err := os.MkdirAll(rel, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"SOP.toml": "[sop]\nname = \"release\"\ndescription = \"Tag a release\"\nexecution_mode = \"auto\"\n\n[[triggers]]\ntype = \"cron\"\nexpression = \"0 9 * * 1\"\n",
		"SOP.md":   "## Steps\n\n1. **Tag** — Tag it.\n   - tools: time, file_read\n   - on_failure: retry:1\n",
	} {
		if err := os.WriteFile(filepath.Join(rel, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d := StartOn(t, cfgDir, WithConfig(cfg))
	c := &zc{Client: d.Dial(t), t: t}
	c.call("initialize", map[string]any{"protocol_version": 1})

	// The pane lists the SOPs, then checks the selected one has a manual trigger before it offers a run.
	var names []zcSopNamed
	c.decode("sops/list", map[string]any{}, &names)
	if len(names) != 2 || names[0].Name != "deploy" || names[1].Name != "release" {
		t.Fatalf("sops/list = %+v", names)
	}
	var draft zcSopDraft
	c.decode("sops/get", map[string]any{"name": "deploy"}, &draft)
	if len(draft.Triggers) != 1 || draft.Triggers[0].Type != "manual" || len(draft.Steps) != 2 || draft.Steps[1].Title != "Ship" {
		t.Fatalf("sops/get = %+v", draft)
	}
	c.decode("sops/get", map[string]any{"name": "release"}, &draft)
	if draft.Triggers[0].Type != "cron" || draft.Triggers[0].Expression == nil || len(draft.Steps[0].SuggestedTools) != 2 ||
		string(draft.Steps[0].OnFailure) != `{"retry":{"max":1}}` {
		t.Fatalf("sops/get release = %+v", draft)
	}

	runOnce := func() string {
		var r zcSopRun
		c.decode("sops/run", map[string]any{"name": "deploy", "payload": nil}, &r)
		if r.RunID == "" {
			t.Fatal("sops/run: empty run_id")
		}
		return r.RunID
	}
	poll := func(id, status string) zcSopRunSummary {
		deadline := time.Now().Add(20 * time.Second)
		for {
			var rs zcSopRuns
			c.decode("sops/runs", map[string]any{"sop": nil}, &rs)
			for _, r := range rs.Runs {
				if r.RunID == id && r.Status == status {
					return r
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %s never %s: %+v", id, status, rs.Runs)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	id := runOnce()
	poll(id, "waiting_approval")
	var ov zcRunOverlay
	c.decode("sops/run-overlay", map[string]any{"name": "deploy", "run_id": id}, &ov)
	if !ov.Waiting || len(ov.Nodes) != 2 || ov.Nodes[0].State != "active" {
		t.Fatalf("overlay at the gate = %+v", ov)
	}
	c.decode("sops/decide", map[string]any{"name": "deploy", "run_id": id, "decision": "approve"}, &ov)
	done := poll(id, "completed")
	if done.Active || done.CompletedAt == nil || done.TriggerSource != "manual" || done.TotalSteps != 2 {
		t.Fatalf("completed summary = %+v", done)
	}
	c.decode("sops/run-overlay", map[string]any{"name": "deploy", "run_id": id}, &ov)
	if ov.Nodes[0].State != "completed" || ov.Nodes[1].State != "completed" {
		t.Fatalf("overlay after the run = %+v", ov)
	}

	id2 := runOnce()
	poll(id2, "waiting_approval")
	c.decode("sops/decide", map[string]any{"name": "deploy", "run_id": id2, "decision": map[string]any{"deny": map[string]any{}}}, &ov)
	if ov.Status != "cancelled" || ov.Waiting {
		t.Fatalf("overlay after deny = %+v", ov)
	}
	poll(id2, "cancelled")
}

// zc:"default" fails where serde fails: a #[serde(default)] Vec or struct sent as null.
func TestDecodeZCDefaultRefusesNull(t *testing.T) {
	t.Parallel()
	var s zcSopStep
	if err := decodeZC(json.RawMessage(`{"number":1,"title":"t","body":"b","suggested_tools":null}`), &s); err == nil {
		t.Fatal("a null suggested_tools decoded")
	}
	if err := decodeZC(json.RawMessage(`{"number":1,"title":"t","body":"b","routing":null}`), &s); err == nil {
		t.Fatal("a null routing decoded")
	}
	if err := decodeZC(json.RawMessage(`{"number":1,"title":"t","body":"b","schema":null,"pos":null}`), &s); err != nil {
		t.Fatalf("absent defaults and null Options must decode: %v", err)
	}
}
