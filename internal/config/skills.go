package config

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Skill prompt injection modes ([skills] prompt_injection_mode).
const (
	SkillsModeFull    = "full"
	SkillsModeCompact = "compact"
)

// SkillsConfig is [skills]: how skills reach the system prompt (upstream/agent-workspace.md §5).
type SkillsConfig struct {
	PromptInjectionMode string `toml:"prompt_injection_mode" enum:"full|compact" desc:"full: every skill's instructions are in the system prompt; compact: names and descriptions only, the model reads a skill with read_skill."`
	AllowScripts        bool   `toml:"allow_scripts" desc:"Load skills that ship script files (.sh, .bash, .ps1, or a #! line); off: such skills are dropped."`
}

// SkillBundleConfig is skill_bundles.<alias>: a directory of skills agents opt into with skill_bundles.
type SkillBundleConfig struct {
	Directory string   `toml:"directory" note:"empty: <install>/shared/skills/<alias>" desc:"Directory holding the bundle's skills (one subdirectory each); relative to the install root; must lie under <install>/shared/."`
	Include   []string `toml:"include" desc:"Skill names the bundle offers; empty: all of them."`
	Exclude   []string `toml:"exclude" desc:"Skill names the bundle never offers (wins over include)."`
}

// BundleDir resolves a bundle's directory against the install root: empty means <root>/shared/skills/<alias>,
// a relative path is joined to the root, an absolute one is taken as is. The result is cleaned.
func BundleDir(root, alias string, b SkillBundleConfig) string {
	d := strings.TrimSpace(b.Directory)
	switch {
	case d == "":
		return filepath.Join(root, "shared", "skills", alias)
	case filepath.IsAbs(d):
		return filepath.Clean(d)
	}
	return filepath.Join(root, d)
}

// InShared reports whether dir lies strictly under <root>/shared/.
func InShared(root, dir string) bool {
	rel, err := filepath.Rel(filepath.Join(root, "shared"), dir)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// validateSkills checks [skills], [skill_bundles] and the agents' skill_bundles. A bundle whose directory lies
// outside <install>/shared/ (or that shares its directory with another) is a warning, not an error: the bundle
// is refused when skills are loaded, and everything else runs. The install root is the config file's
// directory; without an absolute file name only relative directories are checked.
func validateSkills(cfg *Config, v *validator, file string) []string {
	var warnings []string
	switch cfg.Skills.PromptInjectionMode {
	case SkillsModeFull, SkillsModeCompact:
	default:
		v.add(Path{"skills", "prompt_injection_mode"}, "must be full or compact, got %q", cfg.Skills.PromptInjectionMode)
	}
	root := ""
	if filepath.IsAbs(file) {
		root = filepath.Dir(file)
	}
	seen := map[string]string{}
	for _, alias := range sortedKeys(cfg.SkillBundles) {
		b := cfg.SkillBundles[alias]
		if strings.HasPrefix(alias, "_") {
			warnings = append(warnings, fmt.Sprintf("config: skill_bundles.%s: a bundle alias must not start with '_' (reserved for shared/skills/_deleted): the bundle is refused", alias))
			continue
		}
		if root == "" && filepath.IsAbs(strings.TrimSpace(b.Directory)) {
			continue
		}
		base := root
		if base == "" {
			base = string(filepath.Separator) + "install"
		}
		dir := BundleDir(base, alias, b)
		if !InShared(base, dir) {
			warnings = append(warnings, fmt.Sprintf("config: skill_bundles.%s.directory %q lies outside <install>/shared/: the bundle is refused", alias, b.Directory))
			continue
		}
		if other, dup := seen[dir]; dup {
			warnings = append(warnings, fmt.Sprintf("config: skill_bundles.%s uses the same directory as skill_bundles.%s: the bundle is refused", alias, other))
			continue
		}
		seen[dir] = alias
	}
	for _, name := range sortedKeys(cfg.Agents) {
		for _, b := range cfg.Agents[name].SkillBundles {
			if _, ok := cfg.SkillBundles[b]; !ok {
				warnings = append(warnings, fmt.Sprintf("config: agents.%s.skill_bundles names %q, which is not defined under [skill_bundles]: ignored", name, b))
			}
		}
	}
	return warnings
}

// unsupportedSkillsKeys are upstream [skills] keys this runtime reads no value from, with what they are about.
var unsupportedSkillsKeys = map[string]string{
	"open_skills_enabled": "the open-skills repository", "open_skills_dir": "the open-skills repository",
	"registry_url": "skill registries", "extra_registries": "skill registries",
	"skill_creation": "skill creation", "install_suggestions": "install suggestions",
	"skill_improvement": "skill improvement",
}

// skillsWarnings rewrites the unknown-key warning of each upstream [skills] key we do not support into one that
// says so; other warnings pass unchanged.
func skillsWarnings(warnings []string) []string {
	out := make([]string, 0, len(warnings))
	for _, w := range warnings {
		if rest, ok := strings.CutPrefix(w, "config: unknown key skills."); ok {
			key, line, _ := strings.Cut(rest, " at line ")
			top, _, _ := strings.Cut(key, ".")
			if what, known := unsupportedSkillsKeys[top]; known {
				w = fmt.Sprintf("config: skills.%s (line %s) is not supported (%s): ignored, kept in the file", key, line, what)
			}
		}
		out = append(out, w)
	}
	return out
}
