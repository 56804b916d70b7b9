package config

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

func ptr(s string) *string { return &s }

func TestPatchAllOrNothing(t *testing.T) {
	m, path := openManager(t, commentedConfig)
	before, gen := readFile(t, path), m.Generation()
	// The third op fails (a port out of range, found only when the candidate is validated as a whole), after a
	// set and a delete that would each have succeeded alone.
	_, err := m.Patch(t.Context(), []PatchEntry{
		{Op: PatchSet, Prop: "gateway.host", Value: json.RawMessage(`"0.0.0.0"`)},
		{Op: PatchDelete, Prop: "risk_profiles.supervised.workspace_only"},
		{Op: PatchSet, Prop: "gateway.port", Value: json.RawMessage(`70000`)},
	}, false, nil)
	var ee *EntryError
	if !errors.As(err, &ee) || ee.Index != 2 || ee.Prop != "gateway.port" || !strings.Contains(err.Error(), "ops[2] gateway.port") {
		t.Fatalf("err = %v, want the third op blamed", err)
	}
	if got := readFile(t, path); got != before {
		t.Fatalf("file changed:\n%s", got)
	}
	if m.Generation() != gen || m.Current().Gateway.Host == "0.0.0.0" || !m.Current().RiskProfiles["supervised"].WorkspaceOnly {
		t.Fatal("the live config changed")
	}
	// A failure staging an op (a comment on a key the file does not set) is the same: nothing is written.
	_, err = m.Patch(t.Context(), []PatchEntry{
		{Op: PatchSet, Prop: "gateway.host", Value: json.RawMessage(`"0.0.0.0"`)},
		{Op: PatchComment, Prop: "gateway.port", Comment: ptr("x")},
	}, false, nil)
	if !errors.As(err, &ee) || ee.Index != 1 || !errors.Is(err, ErrNotEditable) || readFile(t, path) != before {
		t.Fatalf("err = %v", err)
	}
	for _, bad := range []PatchEntry{
		{Op: "move", Prop: "gateway.host"},
		{Op: PatchSet, Prop: "gateway.host"},
		{Op: PatchComment, Prop: "gateway.host"},
		{Op: PatchDelete, Prop: "gateway.host", Comment: ptr("x")},
		{Op: PatchSet, Prop: "gateway", Value: json.RawMessage(`1`)},
		{Op: PatchSet, Prop: "gateway.nope", Value: json.RawMessage(`1`)},
	} {
		if _, err := m.Patch(t.Context(), []PatchEntry{bad}, false, nil); !errors.As(err, &ee) || ee.Index != 0 {
			t.Errorf("%+v: err = %v", bad, err)
		}
	}
	if readFile(t, path) != before {
		t.Fatal("a refused op wrote the file")
	}
}

func TestPatchOneWrite(t *testing.T) {
	m, path := openManager(t, commentedConfig)
	gen := m.Generation()
	var authorized []string
	props, err := m.Patch(t.Context(), []PatchEntry{
		{Op: PatchSet, Prop: "gateway.port", Value: json.RawMessage(`43817`), Comment: ptr("the dashboard's port")},
		{Op: PatchDelete, Prop: "risk_profiles.supervised.workspace_only"},
		{Op: PatchComment, Prop: "agents.default.risk_profile", Comment: ptr("reviewed\nby ops")},
		{Op: PatchSet, Prop: "gateway.port", Value: json.RawMessage(`43818`)},
	}, false, func(p []string) error { authorized = p; return nil })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"gateway.port", "risk_profiles.supervised.workspace_only", "agents.default.risk_profile"}
	if !reflect.DeepEqual(props, want) || len(authorized) != 4 {
		t.Fatalf("props %v authorized %v", props, authorized)
	}
	if m.Generation() != gen+1 {
		t.Fatalf("generation %d, want one swap after %d", m.Generation(), gen)
	}
	got := readFile(t, path)
	for _, s := range []string{"# the dashboard's port\nport = 43818\n", "# reviewed\n# by ops\nrisk_profile   = \"supervised\"",
		"# zeroclaw config — hand written", "model = \"echo\"   # offline", "# the agent\n[agents.default]"} {
		if !strings.Contains(got, s) {
			t.Errorf("file lacks %q:\n%s", s, got)
		}
	}
	if strings.Contains(got, "workspace_only") || m.Current().Gateway.Port != 43818 {
		t.Fatalf("patch not applied:\n%s", got)
	}
	// Once the file parses as a comment, a config/set of the key keeps it.
	if _, err := m.Set(t.Context(), "gateway.port", json.RawMessage(`43819`), nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(readFile(t, path), "# the dashboard's port\nport = 43819\n") {
		t.Fatal("a later set lost the comment")
	}
}

func TestDriftAppearsAndReloadClearsIt(t *testing.T) {
	m, path := openManager(t, commentedConfig+"\n[gateway]\nport = 4000\n", "ZEROCLAW_GATEWAY__HOST=10.0.0.1")
	if d, err := m.Drift(); err != nil || len(d) != 0 {
		t.Fatalf("drift right after open = %v, %v", d, err)
	}
	// Behind the daemon's back: a value changed, an entry added, a secret set, and the env-set host edited.
	text := strings.Replace(readFile(t, path), "port = 4000", "port = 4001\nhost = \"192.168.1.1\"", 1) +
		"\n[providers.models.openai.work]\nmodel = \"gpt-4.1\"\napi_key = \"sk-behind-your-back\"\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := m.Drift()
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]Drift{}
	for _, e := range d {
		byPath[e.Path] = e
	}
	if p := byPath["gateway.port"]; reflectString(p.InMemory) != "4000" || p.Secret {
		t.Errorf("gateway.port drift = %+v", p)
	}
	if p := byPath["gateway.port"]; reflectString(p.OnDisk) != "4001" {
		t.Errorf("gateway.port on disk = %#v", p.OnDisk)
	}
	if k := byPath["providers.models.openai.work.api_key"]; !k.Secret || k.InMemory != nil || k.OnDisk != nil {
		t.Errorf("secret drift = %+v (must carry no value)", k)
	}
	if e := byPath["providers.models.openai.work.model"]; e.InMemory != nil || e.OnDisk != "gpt-4.1" {
		t.Errorf("new entry drift = %+v", e)
	}
	if _, ok := byPath["gateway.host"]; ok {
		t.Error("an env-set property is reported as drift")
	}
	// A patch writing a drifted property is refused (nothing written) unless the caller overrides the drift;
	// one writing another property goes through.
	before := readFile(t, path)
	_, err = m.Patch(t.Context(), []PatchEntry{{Op: PatchSet, Prop: "gateway.port", Value: json.RawMessage(`4002`)}}, true, nil)
	var de *DriftError
	if !errors.As(err, &de) || !errors.Is(err, ErrDrifted) || !reflect.DeepEqual(de.Props, []string{"gateway.port"}) || readFile(t, path) != before {
		t.Fatalf("err = %v", err)
	}
	if _, err := m.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	if d, err := m.Drift(); err != nil || len(d) != 0 {
		t.Fatalf("drift after reload = %+v, %v", d, err)
	}
	// Broken by hand: the drift cannot be computed, and says why.
	if err := os.WriteFile(path, []byte("[gateway\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Drift(); !errors.Is(err, ErrInvalidConfig) || strings.Contains(err.Error(), path) {
		t.Fatalf("drift of a broken file: %v (must name the file by its base name only)", err)
	}
}

func reflectString(v any) string { b, _ := json.Marshal(v); return string(b) }

// A test op is checked under the write lock against the config in force: one that does not hold refuses the
// whole patch; tests alone write nothing; a secret cannot be tested.
func TestPatchTestOps(t *testing.T) {
	m, path := openManager(t, commentedConfig+"\n[gateway]\nport = 4000\n")
	before, gen := readFile(t, path), m.Generation()
	_, err := m.Patch(t.Context(), []PatchEntry{
		{Op: PatchSet, Prop: "gateway.host", Value: json.RawMessage(`"0.0.0.0"`)},
		{Op: PatchTest, Prop: "gateway.port", Value: json.RawMessage(`4001`)},
	}, false, nil)
	var ee *EntryError
	if !errors.As(err, &ee) || ee.Index != 1 || !errors.Is(err, ErrTestFailed) || !strings.Contains(err.Error(), "gateway.port is 4000, not 4001") {
		t.Fatalf("err = %v", err)
	}
	if readFile(t, path) != before || m.Generation() != gen {
		t.Fatal("a failed test let the patch write")
	}
	props, err := m.Patch(t.Context(), []PatchEntry{{Op: PatchTest, Prop: "gateway.port", Value: json.RawMessage(`4000`)},
		{Op: PatchTest, Prop: "risk_profiles.supervised.auto_approve", Value: json.RawMessage(`["file_read","time"]`)}}, false, nil)
	if err != nil || len(props) != 0 || m.Generation() != gen {
		t.Fatalf("tests alone: %v %v, generation %d", props, err, m.Generation())
	}
	props, err = m.Patch(t.Context(), []PatchEntry{{Op: PatchTest, Prop: "gateway.port", Value: json.RawMessage(`4000`)},
		{Op: PatchSet, Prop: "gateway.port", Value: json.RawMessage(`4002`)}}, false, nil)
	if err != nil || !reflect.DeepEqual(props, []string{"gateway.port"}) || m.Current().Gateway.Port != 4002 {
		t.Fatalf("test then set: %v %v", props, err)
	}
	// A validation failure blames the op that wrote the property, not the test of it before.
	_, err = m.Patch(t.Context(), []PatchEntry{{Op: PatchTest, Prop: "gateway.port", Value: json.RawMessage(`4002`)},
		{Op: PatchSet, Prop: "gateway.port", Value: json.RawMessage(`70000`)}}, false, nil)
	if !errors.As(err, &ee) || ee.Index != 1 {
		t.Fatalf("blame: %v", err)
	}
	for _, bad := range []PatchEntry{{Op: PatchTest, Prop: "gateway.paired_tokens", Value: json.RawMessage(`[]`)},
		{Op: PatchTest, Prop: "gateway.port"}, {Op: PatchTest, Prop: "gateway.port", Value: json.RawMessage(`"x"`)}} {
		if _, err := m.Patch(t.Context(), []PatchEntry{bad}, false, nil); !errors.As(err, &ee) || !errors.Is(err, ErrInvalidValue) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}
