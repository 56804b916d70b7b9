// Package quickstart is the onboarding builder behind the quickstart/* methods and `zeroclaw quickstart`: the
// state a client shows, the fields of a "create new" form, and a submission checked and applied as one
// surgical, validated config write that only adds what was answered.
package quickstart

import (
	"errors"
	"slices"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// Errors of the requests themselves (a bad section or surface); a submission's own problems are
// api.QuickstartError values in the result, never errors.
var (
	// ErrInvalid matches a request the quickstart cannot read: an unknown section or surface.
	ErrInvalid = errors.New("quickstart: invalid request")
)

// Preset names, upstream's (presets.rs). The CLI's strict, balanced and open are the three risk presets.
const (
	RiskLockedDown = "locked_down"
	RiskBalanced   = "balanced"
	RiskYolo       = "yolo"

	RuntimeTight      = "tight"
	RuntimeLocalSmall = "local_small"
	RuntimeBalanced   = "balanced"
	RuntimeUnbounded  = "unbounded"
)

// DefaultRuntimeProfile is the runtime preset of a provider without a recommendation.
const DefaultRuntimeProfile = RuntimeUnbounded

// MaxPersonalityChars bounds one staged personality file (upstream's MAX_FILE_CHARS).
const MaxPersonalityChars = 20000

// PersonalityFiles are the identity files a submission may stage, in upstream's order.
var PersonalityFiles = []string{"SOUL.md", "IDENTITY.md", "USER.md", "AGENTS.md", "TOOLS.md", "HEARTBEAT.md", "MEMORY.md"}

// MemoryKinds are the memory choices upstream offers, in its order; qdrant and lucid are refused here.
var MemoryKinds = []string{"sqlite", "markdown", "postgres", "qdrant", "lucid", "none"}

// riskPreset is one risk preset: its row and the profile keys it writes under risk_profiles.<name>.
type riskPreset struct {
	row    api.QuickstartPreset
	values map[string]string // leaf => JSON value
}

// riskPresets are upstream's three presets, mapped onto this runtime's risk policy. balanced is the middle
// one: the agent runs its workspace tools (shell, file writes, memory) without asking, asks for the other
// medium-risk calls, and high-risk calls stay refused; it may delegate.
var riskPresets = []riskPreset{
	{row: api.QuickstartPreset{PresetName: RiskLockedDown, Label: "Locked Down",
		Help: "Tightest defaults. Workspace-only filesystem access, approval required for every medium-risk call, high-risk calls refused."},
		values: map[string]string{"level": `"supervised"`, "workspace_only": `true`}},
	{row: api.QuickstartPreset{PresetName: RiskBalanced, Label: "Balanced",
		Help: "Trusted daily driver. Supervised and workspace-scoped: shell, file writes and memory run in the workspace without asking, other risky calls ask first, high-risk commands stay blocked. Recommended for most users."},
		values: map[string]string{"level": `"supervised"`, "workspace_only": `true`,
			"auto_approve": `["shell","file_write","memory_store"]`, "delegation_policy.mode": `"allow"`}},
	{row: api.QuickstartPreset{PresetName: RiskYolo, Label: "YOLO",
		Help: "Full autonomy. No approval gates and no workspace scoping (blocked commands and forbidden paths still hold). Only on a machine you don't mind breaking."},
		values: map[string]string{"level": `"full"`, "workspace_only": `false`, "auto_approve": `["*"]`,
			"delegation_policy.mode": `"allow"`}},
}

// runtimePresets are upstream's runtime presets. This runtime has no runtime profiles yet: the choice is
// checked and reported, and writes nothing.
var runtimePresets = []api.QuickstartPreset{
	{PresetName: RuntimeTight, Label: "Tight", Help: "Small budgets and short timeouts. Good for cheap models, metered API keys, or tight feedback loops."},
	{PresetName: RuntimeLocalSmall, Label: "Local Small", Help: "Compact profile for smaller local models: small context and tool results, no parallel tool fan-out."},
	{PresetName: RuntimeBalanced, Label: "Balanced", Help: "Middle-of-the-road operational defaults. Suits most users most of the time."},
	{PresetName: RuntimeUnbounded, Label: "Unbounded", Help: "Wide-open budgets and long timeouts, for driving the agent through a hard task."},
}

// providerType is one model provider family a quickstart can create.
type providerType struct {
	row        api.QuickstartTypeOption
	defaultURI string
	needsKey   bool
}

var providerTypes = []providerType{
	{row: api.QuickstartTypeOption{Kind: config.FamilyOpenAI, DisplayName: "OpenAI-compatible (OpenAI, or a local server by its uri)"},
		defaultURI: "https://api.openai.com/v1", needsKey: true},
	{row: api.QuickstartTypeOption{Kind: config.FamilyAnthropic, DisplayName: "Anthropic"}, defaultURI: "https://api.anthropic.com", needsKey: true},
	{row: api.QuickstartTypeOption{Kind: config.FamilyOllama, DisplayName: "Ollama", Local: true}, defaultURI: "http://localhost:11434"},
	{row: api.QuickstartTypeOption{Kind: config.FamilyEcho, DisplayName: "Echo (offline: repeats the prompt)", Local: true}},
}

// typeAliases are the provider names upstream accepts for a family.
var typeAliases = map[string]string{"claude": config.FamilyAnthropic, "openai-compatible": config.FamilyOpenAI,
	"lmstudio": config.FamilyOpenAI, "llamacpp": config.FamilyOpenAI, "vllm": config.FamilyOpenAI}

// resolveType returns the family a provider type names ("" if none).
func resolveType(t string) (providerType, bool) {
	t = strings.ToLower(strings.TrimSpace(t))
	if f, ok := typeAliases[t]; ok {
		t = f
	}
	i := slices.IndexFunc(providerTypes, func(p providerType) bool { return p.row.Kind == t })
	if i < 0 {
		return providerType{}, false
	}
	return providerTypes[i], true
}

// NeedsKey reports whether the provider type needs an API key (a remote service).
func NeedsKey(providerType string) bool {
	p, ok := resolveType(providerType)
	return ok && p.needsKey
}

// RiskPresetName maps the CLI's preset words (strict, balanced, open) and upstream's names to a preset name;
// "" when s names none.
func RiskPresetName(s string) string {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "strict", RiskLockedDown, "locked-down":
		return RiskLockedDown
	case "balanced":
		return RiskBalanced
	case "open", RiskYolo:
		return RiskYolo
	}
	return ""
}
