package config

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

const mapKeysConfig = `# hand written
schema_version = 3

[providers.models.echo.default]
model = "echo"   # offline

# the agent
[agents.default]
model_provider = 'echo.default'
risk_profile   = "supervised"

# a second agent, with a workspace table
[agents.bot]   # keep this comment
model_provider = "echo.default"
risk_profile = "supervised"

[agents.bot.workspace]
path = "/tmp/bot"

[risk_profiles.supervised]
level = "supervised"
workspace_only = true

[permission_profiles.ops]
grants = ["config:read"]

[users.alice]
uid = 4242
permission_profiles = ["ops", "other"]

[permission_profiles.other]
grants = []
`

func TestMapKeys(t *testing.T) {
	m, _ := openManager(t, mapKeysConfig)
	for path, want := range map[string][]string{
		"agents":                  {"bot", "default"},
		"providers.models":        {"echo"},
		"providers.models.echo":   {"default"},
		"providers.models.openai": {},
		"permission_profiles":     {"ops", "other"},
		"cost.prices":             {},
	} {
		got, err := m.MapKeys(path)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("MapKeys(%s) = %v, %v; want %v", path, got, err, want)
		}
	}
	for _, path := range []string{"gateway", "gateway.port", "agents.bot", "agents.bot.env", "providers.models.nope", "", "a..b"} {
		if _, err := m.MapKeys(path); !errors.Is(err, ErrNoMapSection) {
			t.Errorf("MapKeys(%q) err = %v, want ErrNoMapSection", path, err)
		}
	}
}

func TestCreateMapKeySeedsAValidEntry(t *testing.T) {
	m, path := openManager(t, mapKeysConfig)
	ctx := context.Background()
	var authorized []string
	auth := func(props []string) error { authorized = append(authorized, props...); return nil }
	created, err := m.CreateMapKey(ctx, "agents", "helper", auth)
	if err != nil || !created {
		t.Fatalf("create: %v %v", created, err)
	}
	if !slices.Equal(authorized, []string{"agents.helper"}) {
		t.Fatalf("authorized %v", authorized)
	}
	a := m.Current().Agents["helper"]
	if a.ModelProvider != "echo.default" || a.RiskProfile != "supervised" || !a.IsEnabled() {
		t.Fatalf("new agent %+v", a)
	}
	text := readFile(t, path)
	if !strings.HasPrefix(text, "# hand written\n") || !strings.Contains(text, "[agents.bot]   # keep this comment\n") {
		t.Fatalf("comments lost:\n%s", text)
	}
	if created, err := m.CreateMapKey(ctx, "agents", "helper", nil); err != nil || created {
		t.Fatalf("second create: %v %v, want false", created, err)
	}
	if created, err := m.CreateMapKey(ctx, "providers.models.openai", "work", nil); err != nil || !created {
		t.Fatalf("create provider: %v %v", created, err)
	}
	if p := m.Current().Providers.Models["openai"]["work"]; p.Model != "gpt-4.1" {
		t.Fatalf("new provider %+v, want the catalogue's first model", p)
	}
	if created, err := m.CreateMapKey(ctx, "risk_profiles", "careful", nil); err != nil || !created {
		t.Fatalf("create profile: %v %v", created, err)
	}
	if rp := m.Current().RiskProfiles["careful"]; rp.Level != LevelSupervised || !rp.WorkspaceOnly {
		t.Fatalf("new profile %+v", rp)
	}
	before := readFile(t, path)
	for _, c := range []struct{ path, key string }{
		{"agents", "Bad"}, {"agents", "bad-name"}, {"agents", "_x"}, {"agents", "a__b"}, {"agents", ""},
		{"agents", "default"}, {"providers.models", "nope"}, {"agents", strings.Repeat("a", 64)},
	} {
		if _, err := m.CreateMapKey(ctx, c.path, c.key, nil); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("create %s.%q: err %v, want ErrInvalidKey", c.path, c.key, err)
		}
	}
	if _, err := m.CreateMapKey(ctx, "gateway", "x", nil); !errors.Is(err, ErrNoMapSection) {
		t.Errorf("create under gateway: %v", err)
	}
	refused := errors.New("refused")
	if _, err := m.CreateMapKey(ctx, "agents", "other", func([]string) error { return refused }); !errors.Is(err, refused) {
		t.Errorf("authorize error: %v", err)
	}
	if after := readFile(t, path); after != before {
		t.Fatalf("refused creates changed the file:\n%s", after)
	}
}

func TestDeleteMapKeyRemovesTheWholeEntry(t *testing.T) {
	m, path := openManager(t, mapKeysConfig)
	ctx := context.Background()
	deleted, err := m.DeleteMapKey(ctx, "agents", "bot", nil)
	if err != nil || !deleted {
		t.Fatalf("delete: %v %v", deleted, err)
	}
	want := strings.Replace(mapKeysConfig, `# a second agent, with a workspace table
[agents.bot]   # keep this comment
model_provider = "echo.default"
risk_profile = "supervised"

[agents.bot.workspace]
path = "/tmp/bot"

`, "# a second agent, with a workspace table\n\n", 1) // a comment above a header is not the header's to take
	if got := readFile(t, path); got != want {
		t.Fatalf("file after delete:\n%s\nwant:\n%s", got, want)
	}
	if _, ok := m.Current().Agents["bot"]; ok {
		t.Fatal("agent still live")
	}
	if deleted, err := m.DeleteMapKey(ctx, "agents", "bot", nil); err != nil || deleted {
		t.Fatalf("second delete: %v %v, want false", deleted, err)
	}
	// A provider an agent still names cannot go: validation refuses, nothing changes.
	before := readFile(t, path)
	if _, err := m.DeleteMapKey(ctx, "providers.models.echo", "default", nil); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("delete referenced provider: %v", err)
	}
	if readFile(t, path) != before {
		t.Fatal("refused delete changed the file")
	}
}

func TestDeleteMapKeyDottedAndInline(t *testing.T) {
	m, path := openManager(t, `schema_version = 3
[providers.models.echo.default]
model = "echo"
[agents]
default = { model_provider = "echo.default", risk_profile = "supervised" }
bot.model_provider = "echo.default"
bot.risk_profile = "supervised"
[risk_profiles.supervised]
level = "supervised"
`)
	for _, key := range []string{"bot", "default"} {
		if deleted, err := m.DeleteMapKey(context.Background(), "agents", key, nil); err != nil || !deleted {
			t.Fatalf("delete %s: %v %v", key, deleted, err)
		}
	}
	want := "schema_version = 3\n[providers.models.echo.default]\nmodel = \"echo\"\n[agents]\n[risk_profiles.supervised]\nlevel = \"supervised\"\n"
	if got := readFile(t, path); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestRenameMapKeyRewritesReferences(t *testing.T) {
	m, path := openManager(t, mapKeysConfig)
	ctx := context.Background()
	var authorized []string
	auth := func(props []string) error { authorized = props; return nil }
	renamed, err := m.RenameMapKey(ctx, "risk_profiles", "supervised", "careful", auth)
	if err != nil || !renamed {
		t.Fatalf("rename: %v %v", renamed, err)
	}
	want := []string{"risk_profiles.supervised", "risk_profiles.careful", "agents.bot.risk_profile", "agents.default.risk_profile"}
	if !slices.Equal(authorized, want) {
		t.Fatalf("authorized %v, want %v", authorized, want)
	}
	text := strings.NewReplacer(
		"[risk_profiles.supervised]", "[risk_profiles.careful]",
		`risk_profile   = "supervised"`, `risk_profile   = "careful"`,
		`risk_profile = "supervised"`, `risk_profile = "careful"`,
	).Replace(mapKeysConfig)
	if got := readFile(t, path); got != text {
		t.Fatalf("file after rename:\n%s\nwant:\n%s", got, text)
	}
	if m.Current().Agents["bot"].RiskProfile != "careful" {
		t.Fatal("live config not swapped")
	}

	if renamed, err := m.RenameMapKey(ctx, "agents", "bot", "robot", nil); err != nil || !renamed {
		t.Fatalf("rename agent: %v %v", renamed, err)
	}
	if ws := m.Current().Agents["robot"].Workspace.Path; ws != "/tmp/bot" {
		t.Fatalf("sub-table not moved: %q", ws)
	}
	if renamed, err := m.RenameMapKey(ctx, "permission_profiles", "ops", "operators", nil); err != nil || !renamed {
		t.Fatalf("rename permission profile: %v %v", renamed, err)
	}
	if got := m.Current().Users["alice"].PermissionProfiles; !slices.Equal(got, []string{"operators", "other"}) {
		t.Fatalf("user profiles %v", got)
	}
	if renamed, err := m.RenameMapKey(ctx, "agents", "ghost", "spirit", nil); err != nil || renamed {
		t.Fatalf("rename absent: %v %v, want false", renamed, err)
	}
	before := readFile(t, path)
	for _, c := range []struct {
		path, from, to string
		want           error
	}{
		{"agents", "robot", "robot", ErrInvalidKey},
		{"agents", "robot", "default", ErrInvalidKey},
		{"agents", "default", "main", ErrInvalidKey},
		{"agents", "robot", "Robot", ErrInvalidKey},
		{"permission_profiles", "operators", "other", ErrInvalidKey},
		{"providers.models", "echo", "openai", ErrNotEditable},
		{"limits", "a", "b", ErrNoMapSection},
	} {
		if _, err := m.RenameMapKey(ctx, c.path, c.from, c.to, nil); !errors.Is(err, c.want) {
			t.Errorf("rename %s %s→%s: err %v, want %v", c.path, c.from, c.to, err, c.want)
		}
	}
	if readFile(t, path) != before {
		t.Fatal("refused renames changed the file")
	}
}

func TestRenameProviderRewritesAgentsAndRefusesDottedEntries(t *testing.T) {
	m, path := openManager(t, mapKeysConfig)
	ctx := context.Background()
	if renamed, err := m.RenameMapKey(ctx, "providers.models.echo", "default", "local", nil); err != nil || !renamed {
		t.Fatalf("rename: %v %v", renamed, err)
	}
	for _, a := range []string{"default", "bot"} {
		if got := m.Current().Agents[a].ModelProvider; got != "echo.local" {
			t.Fatalf("agents.%s.model_provider = %q", a, got)
		}
	}
	if !strings.Contains(readFile(t, path), "model_provider = 'echo.local'") && !strings.Contains(readFile(t, path), `model_provider = "echo.local"`) {
		t.Fatalf("reference not rewritten:\n%s", readFile(t, path))
	}

	m2, path2 := openManager(t, "schema_version = 3\n[providers.models.echo.default]\nmodel = \"echo\"\n[agents]\nbot.model_provider = \"echo.default\"\nbot.risk_profile = \"x\"\n[risk_profiles.x]\nlevel = \"full\"\n")
	before := readFile(t, path2)
	if _, err := m2.RenameMapKey(ctx, "agents", "bot", "robot", nil); !errors.Is(err, ErrNotEditable) {
		t.Fatalf("dotted rename: %v", err)
	}
	if readFile(t, path2) != before {
		t.Fatal("refused rename changed the file")
	}
}

func TestCatalogAndMeta(t *testing.T) {
	m, _ := openManager(t, mapKeysConfig+"\n[cost.prices.\"gpt-4o\"]\ninput = 3.5\noutput = 10.0\n[providers.models.openai.work]\nmodel = \"my-tuned-model\"\n")
	cfg := m.Current()
	res, err := CatalogModelsFor(cfg, "openai.work")
	if err != nil || res.Models[0] != "gpt-4.1" || res.Models[len(res.Models)-1] != "my-tuned-model" || res.Local || res.Live {
		t.Fatalf("catalog-models %+v %v", res, err)
	}
	// cost.prices overrides the built-in list price; the other catalog models carry theirs; a custom model none.
	if p := res.Pricing["gpt-4o"]; p.Input != 3.5 || p.Output != 10 {
		t.Fatalf("pricing %+v", res.Pricing)
	}
	if p, ok := res.Pricing["gpt-4o-mini"]; !ok || p.Input != 0.15 || p.Output != 0.6 {
		t.Fatalf("built-in pricing %+v", res.Pricing)
	}
	if _, ok := res.Pricing["my-tuned-model"]; ok {
		t.Fatalf("a custom model has no price: %+v", res.Pricing)
	}
	for _, bad := range []string{"nope", "openai.missing", ""} {
		if _, err := CatalogModelsFor(cfg, bad); !errors.Is(err, ErrInvalidValue) {
			t.Errorf("catalog-models %q: %v", bad, err)
		}
	}
	if v, err := ResolveAliasSource(cfg, "model_providers"); err != nil || !slices.Equal(v, []string{"echo.default", "openai.work"}) {
		t.Fatalf("model_providers %v %v", v, err)
	}
	if v, err := ResolveAliasSource(cfg, "channels"); err != nil || v == nil || len(v) != 0 {
		t.Fatalf("channels %v %v", v, err)
	}
	if _, err := ResolveAliasSource(cfg, "planets"); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("unknown source: %v", err)
	}
	for _, tpl := range Templates() {
		if _, err := section(tpl.Path); err != nil || tpl.Description == "" || tpl.ValueType == "" {
			t.Errorf("template %+v: %v", tpl, err)
		}
	}
	if st := Status(cfg); st.NeedsQuickstart || len(st.Missing) != 0 {
		t.Fatalf("status %+v", st)
	}
	empty := base()
	if st := Status(empty); !st.NeedsQuickstart || !slices.Equal(st.Missing, []string{"providers.models", "risk_profiles", "agents"}) {
		t.Fatalf("status of an empty config %+v", st)
	}
	secs := Sections(cfg)
	if secs[0].Key != "providers.models" || !secs[0].IsQuickstart || !secs[0].Completed || secs[0].Shape != "typed_family_map" || secs[0].CostCategory != "models" {
		t.Fatalf("first section %+v", secs[0])
	}
	// The operator-named maps carry upstream's shape, by which the dashboard lists and opens their entries;
	// a direct form carries none.
	for key, want := range map[string]string{"skill_bundles": "one_tier_alias_map", "cron": "one_tier_alias_map", "agents": "one_tier_alias_map", "gateway": ""} {
		if i := slices.IndexFunc(secs, func(s api.ConfigSectionEntry) bool { return s.Key == key }); i < 0 || secs[i].Shape != want {
			t.Errorf("section %s: shape %q, want %q", key, secs[max(i, 0)].Shape, want)
		}
	}
	// Every top-level table of the schema has a section.
	for i := range configType.NumField() {
		name := tagName(configType.Field(i))
		if name == "schema_version" || name == "locale" || name == "providers" { // scalars, and the family map
			continue
		}
		if !slices.ContainsFunc(secs, func(s api.ConfigSectionEntry) bool { return s.Key == name }) {
			t.Errorf("no section for %s", name)
		}
	}
}
