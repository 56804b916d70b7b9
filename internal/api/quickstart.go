package api

import "encoding/json"

// Quickstart methods (upstream/quickstart.md): the onboarding builder zerocode's Quickstart tab and
// `zeroclaw quickstart` drive. The shapes are upstream's, field for field.
const (
	MethodQuickstartState    = "quickstart/state"
	MethodQuickstartFields   = "quickstart/fields"
	MethodQuickstartValidate = "quickstart/validate"
	MethodQuickstartApply    = "quickstart/apply"
	MethodQuickstartDismiss  = "quickstart/dismiss"
)

// The steps a QuickstartError is filed under (upstream's QuickstartStep).
const (
	QuickstartStepModelProvider  = "model_provider"
	QuickstartStepRiskProfile    = "risk_profile"
	QuickstartStepRuntimeProfile = "runtime_profile"
	QuickstartStepMemory         = "memory"
	QuickstartStepChannels       = "channels"
	QuickstartStepPeerGroups     = "peer_groups"
	QuickstartStepAgent          = "agent"
)

// The surfaces a quickstart run comes from (upstream's Surface).
const (
	QuickstartSurfaceWeb  = "web"
	QuickstartSurfaceTUI  = "tui"
	QuickstartSurfaceCLI  = "cli"
	QuickstartSurfaceTest = "test"
)

// The field sections of quickstart/fields (upstream's FieldSection).
const (
	QuickstartSectionModelProvider = "model_provider"
	QuickstartSectionChannel       = "channel"
	QuickstartSectionPeerGroup     = "peer_group"
)

// The two modes of a selector.
const (
	SelectExisting = "existing"
	SelectFresh    = "fresh"
)

// QuickstartTypeOption is one row of a "Create new ..." picker.
type QuickstartTypeOption struct {
	Kind                  string  `json:"kind"`
	DisplayName           string  `json:"display_name"`
	Local                 bool    `json:"local"`
	DefaultRuntimeProfile *string `json:"default_runtime_profile,omitempty"`
}

// QuickstartPreset is one row of the risk or runtime preset table.
type QuickstartPreset struct {
	PresetName string `json:"preset_name"`
	Label      string `json:"label"`
	Help       string `json:"help"`
}

// QuickstartState is the result of quickstart/state: what is configured and what can be created.
type QuickstartState struct {
	QuickstartCompleted   bool                   `json:"quickstart_completed"`
	Agents                []string               `json:"agents"`
	RiskProfiles          []string               `json:"risk_profiles"`
	RuntimeProfiles       []string               `json:"runtime_profiles"`
	DefaultRuntimeProfile string                 `json:"default_runtime_profile"`
	ModelProviders        []string               `json:"model_providers"`
	Channels              []string               `json:"channels"`
	UnassignedChannels    []string               `json:"unassigned_channels"`
	Storage               []string               `json:"storage"`
	ModelProviderTypes    []QuickstartTypeOption `json:"model_provider_types"`
	ChannelTypes          []QuickstartTypeOption `json:"channel_types"`
	RiskPresets           []QuickstartPreset     `json:"risk_presets"`
	RuntimePresets        []QuickstartPreset     `json:"runtime_presets"`
	MemoryKinds           []string               `json:"memory_kinds"`
	PersonalityFiles      []string               `json:"personality_files"`
}

// QuickstartFieldsParams is quickstart/fields.
type QuickstartFieldsParams struct {
	Section string `json:"section"`
	TypeKey string `json:"type_key"`
}

// QuickstartField is upstream's FieldDescriptor: one field a "Create new" form asks for. Kind is one of
// string, bool, integer, float, enum, string_array, object_array, object.
type QuickstartField struct {
	Key          string    `json:"key"`
	Label        string    `json:"label"`
	Help         string    `json:"help"`
	Kind         string    `json:"kind"`
	IsSecret     bool      `json:"is_secret"`
	EnumVariants *[]string `json:"enum_variants"`
	Required     bool      `json:"required"`
	Default      *string   `json:"default"`
}

// QuickstartFieldsResult is the result of quickstart/fields; an unknown type has no fields.
type QuickstartFieldsResult struct {
	Fields []QuickstartField `json:"fields"`
}

// Selector is upstream's SelectorChoice: {"mode":"existing","value":"<alias>"} or {"mode":"fresh","value":T}.
// Value stays raw until the mode says what it holds.
type Selector struct {
	Mode  string          `json:"mode"`
	Value json.RawMessage `json:"value"`
}

// QuickstartModelProvider is the fresh value of the model provider selector.
type QuickstartModelProvider struct {
	ProviderType string            `json:"provider_type"`
	Alias        string            `json:"alias"`
	Model        string            `json:"model"`
	Fields       map[string]string `json:"fields,omitempty"`
}

// QuickstartChannel is the fresh value of a channel selector.
type QuickstartChannel struct {
	ChannelType string            `json:"channel_type"`
	Alias       string            `json:"alias"`
	Fields      map[string]string `json:"fields,omitempty"`
}

// QuickstartPeerGroup is one peer group of a submission.
type QuickstartPeerGroup struct {
	Name          string   `json:"name"`
	Channel       string   `json:"channel"`
	ExternalPeers []string `json:"external_peers"`
	Ignore        []string `json:"ignore"`
}

// QuickstartPersonalityFile is one identity file staged by a submission.
type QuickstartPersonalityFile struct {
	Filename string `json:"filename"`
	Content  string `json:"content"`
}

// QuickstartAgent is the agent identity of a submission. SystemPrompt and PersonalityFile are accepted and, as
// upstream, not applied.
type QuickstartAgent struct {
	Name             string                      `json:"name"`
	SystemPrompt     string                      `json:"system_prompt"`
	PersonalityFile  *string                     `json:"personality_file"`
	PersonalityFiles []QuickstartPersonalityFile `json:"personality_files"`
}

// BuilderSubmission is upstream's BuilderSubmission: every answer of one quickstart run.
type BuilderSubmission struct {
	ModelProvider  Selector              `json:"model_provider"`
	RiskProfile    Selector              `json:"risk_profile"`
	RuntimeProfile Selector              `json:"runtime_profile"`
	Memory         Selector              `json:"memory"`
	Channels       []Selector            `json:"channels"`
	PeerGroups     []QuickstartPeerGroup `json:"peer_groups"`
	Agent          QuickstartAgent       `json:"agent"`
}

// QuickstartSubmissionParams is quickstart/validate and quickstart/apply.
type QuickstartSubmissionParams struct {
	Submission *BuilderSubmission `json:"submission"`
}

// QuickstartError is one problem of a submission, filed under its step.
type QuickstartError struct {
	Step    string `json:"step"`
	Field   string `json:"field"`
	Message string `json:"message"`
}

// AppliedAgent is what a successful apply created.
type AppliedAgent struct {
	Alias          string   `json:"alias"`
	ModelProvider  string   `json:"model_provider"`
	RiskProfile    string   `json:"risk_profile"`
	RuntimeProfile string   `json:"runtime_profile"`
	Channels       []string `json:"channels"`
	MemoryBackend  string   `json:"memory_backend"`
}

// The kinds of a validate or apply result.
const (
	QuickstartKindOK      = "ok"
	QuickstartKindErrors  = "errors"
	QuickstartKindApplied = "applied"
)

// QuickstartResult is the result of quickstart/validate ({kind:"ok"} or {kind:"errors",errors}) and of
// quickstart/apply ({kind:"applied",agent,daemon_restarted} or {kind:"errors",errors}).
type QuickstartResult struct {
	Kind            string            `json:"kind"`
	Errors          []QuickstartError `json:"errors,omitempty"`
	Agent           *AppliedAgent     `json:"agent,omitempty"`
	DaemonRestarted *bool             `json:"daemon_restarted,omitempty"`
}

// QuickstartDismissParams is quickstart/dismiss.
type QuickstartDismissParams struct {
	RunID    string  `json:"run_id"`
	Surface  string  `json:"surface"`
	LastStep *string `json:"last_step"`
}

// QuickstartDismissResult is the result of quickstart/dismiss.
type QuickstartDismissResult struct {
	Recorded bool `json:"recorded"`
}
