package config

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A bundle outside <install>/shared/, two bundles on one directory, a reserved alias and an agent naming an
// undefined bundle are warnings, not errors: the rest of the config runs.
func TestSkillBundleWarnings(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	raw := []byte(`schema_version = 3

[providers.models.echo.default]
model = "echo"

[agents.default]
model_provider = "echo.default"
risk_profile = "supervised"
skill_bundles = ["team", "ghost"]

[risk_profiles.supervised]
level = "supervised"

[skill_bundles.team]

[skill_bundles.abs]
directory = "` + filepath.Join(dir, "shared", "abs") + `"

[skill_bundles.up]
directory = "shared/../elsewhere"

[skill_bundles.far]
directory = "/opt/skills"

[skill_bundles.twin]
directory = "shared/skills/team"

[skill_bundles._x]

[skills]
prompt_injection_mode = "compact"
open_skills_enabled = true
`)
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, warnings, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`config: skills.open_skills_enabled (line 32) is not supported (the open-skills repository): ignored, kept in the file`,
		`config: skill_bundles._x: a bundle alias must not start with '_' (reserved for shared/skills/_deleted): the bundle is refused`,
		`config: skill_bundles.far.directory "/opt/skills" lies outside <install>/shared/: the bundle is refused`,
		`config: skill_bundles.twin uses the same directory as skill_bundles.team: the bundle is refused`,
		`config: skill_bundles.up.directory "shared/../elsewhere" lies outside <install>/shared/: the bundle is refused`,
	}
	if !slices.Equal(warnings[:len(warnings)-1], want) || warnings[len(warnings)-1] != `config: agents.default.skill_bundles names "ghost", which is not defined under [skill_bundles]: ignored` {
		t.Fatalf("warnings:\n%q", warnings)
	}
	if cfg.Skills.PromptInjectionMode != SkillsModeCompact || !slices.Equal(cfg.Agents["default"].SkillBundles, []string{"team", "ghost"}) {
		t.Fatalf("config: %+v %+v", cfg.Skills, cfg.Agents["default"])
	}
}
