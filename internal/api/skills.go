package api

import "encoding/json"

// Skills methods (upstream/rpc-methods.md, Skills, personality).
const (
	MethodSkillsBundles = "skills/bundles"
	MethodSkillsList    = "skills/list"
	MethodSkillsRead    = "skills/read"
	MethodSkillsWrite   = "skills/write"
	MethodSkillsDelete  = "skills/delete"
)

// SkillBundleEntry is one configured bundle of skills/bundles; Directory is resolved (absolute).
type SkillBundleEntry struct {
	Alias     string   `json:"alias"`
	Directory string   `json:"directory"`
	Include   []string `json:"include"`
	Exclude   []string `json:"exclude"`
}

// SkillsBundlesResult is the result of skills/bundles, sorted by alias.
type SkillsBundlesResult struct {
	Bundles []SkillBundleEntry `json:"bundles"`
}

// SkillsListParams is skills/list; without a bundle every usable bundle is listed.
// Without a bundle, or with bundle "workspace", the skills of the agents' own workspaces are listed too (only
// Agent's when it is set), first: they take precedence over bundles (ours).
type SkillsListParams struct {
	Bundle string `json:"bundle,omitempty"`
	Agent  string `json:"agent,omitempty"`
}

// WorkspaceBundle is the bundle name skills/list gives the skills of an agent's workspace (its skills/
// directory); their entries carry the agent.
const WorkspaceBundle = "workspace"

// SkillEntry is one skill of skills/list. Frontmatter is upstream's SkillFrontmatter object.
type SkillEntry struct {
	Bundle      string          `json:"bundle"`
	Agent       string          `json:"agent,omitempty"` // the agent of a workspace skill
	Name        string          `json:"name"`
	Directory   string          `json:"directory"`
	Frontmatter json.RawMessage `json:"frontmatter"`
}

// SkillsListResult is the result of skills/list.
type SkillsListResult struct {
	Skills []SkillEntry `json:"skills"`
	// Warnings name the bundles skipped because they could not be read (a directory that is a symlink out of
	// <install>/shared/); absent when every bundle was listed.
	Warnings []string `json:"warnings,omitempty"`
}

// SkillRefParams names one skill of a bundle (skills/read, skills/delete).
type SkillRefParams struct {
	Bundle string `json:"bundle"`
	Name   string `json:"name"`
}

// SkillsReadResult is the result of skills/read.
type SkillsReadResult struct {
	Bundle      string          `json:"bundle"`
	Name        string          `json:"name"`
	Frontmatter json.RawMessage `json:"frontmatter"`
	Body        string          `json:"body"`
}

// SkillsWriteParams is skills/write. Frontmatter is upstream's SkillFrontmatter object (name may be omitted:
// it is the skill's name).
type SkillsWriteParams struct {
	Bundle      string          `json:"bundle"`
	Name        string          `json:"name"`
	Frontmatter json.RawMessage `json:"frontmatter"`
	Body        string          `json:"body"`
}

// SkillsWriteResult is the result of skills/write.
type SkillsWriteResult struct {
	Bundle  string `json:"bundle"`
	Name    string `json:"name"`
	Written bool   `json:"written"`
}

// SkillsDeleteResult is the result of skills/delete (the skill is archived, not removed).
type SkillsDeleteResult struct {
	Bundle  string `json:"bundle"`
	Name    string `json:"name"`
	Deleted bool   `json:"deleted"`
}
