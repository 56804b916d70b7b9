package config

// SchemaVersion is the config schema version this package writes and stamps on every save.
const SchemaVersion = 3

// Provider families understood by the runtime.
const (
	FamilyEcho      = "echo"
	FamilyOpenAI    = "openai"
	FamilyOllama    = "ollama"
	FamilyAnthropic = "anthropic"
)

// Families lists the provider families accepted under providers.models.
var Families = []string{FamilyEcho, FamilyOpenAI, FamilyOllama, FamilyAnthropic}

// Risk levels accepted in risk_profiles.<name>.level.
const (
	LevelReadonly   = "readonly"
	LevelSupervised = "supervised"
	LevelFull       = "full"
)

// Config is the whole config.toml. A *Config handed out by a Manager or Load is an immutable snapshot:
// callers must not modify it.
type Config struct {
	SchemaVersion      int                          `toml:"schema_version"`
	Providers          ProvidersConfig              `toml:"providers"`
	Agents             map[string]AgentConfig       `toml:"agents"`
	RiskProfiles       map[string]RiskProfile       `toml:"risk_profiles"`
	Users              map[string]UserConfig        `toml:"users"`
	PermissionProfiles map[string]PermissionProfile `toml:"permission_profiles"`
	Channels           ChannelsConfig               `toml:"channels"`
	Gateway            GatewayConfig                `toml:"gateway"`
	Observability      ObservabilityConfig          `toml:"observability"`
	Cost               CostConfig                   `toml:"cost"`
	Secrets            SecretsConfig                `toml:"secrets"`
	RPC                RPCConfig                    `toml:"rpc"`
	Limits             LimitsConfig                 `toml:"limits"`
	ACP                ACPConfig                    `toml:"acp"`
	Security           SecurityConfig               `toml:"security"`
}

// ProvidersConfig holds model providers as providers.models.<family>.<alias>.
type ProvidersConfig struct {
	Models map[string]map[string]ProviderConfig `toml:"models" keys:"echo|openai|ollama|anthropic"`
}

// ProviderConfig is one configured model endpoint. APIKey and ExtraHeaders are secrets.
type ProviderConfig struct {
	APIKey       string            `toml:"api_key"`
	URI          string            `toml:"uri"`
	Model        string            `toml:"model"`
	Temperature  *float64          `toml:"temperature" note:"unset: the model's own default"`
	TimeoutSecs  int               `toml:"timeout_secs"`
	MaxTokens    int               `toml:"max_tokens" note:"0: the family's default, 4096 for anthropic, not sent for the others"`
	ExtraHeaders map[string]string `toml:"extra_headers"`
}

// DefaultProviderTimeoutSecs is timeout_secs when a provider entry does not set it.
const DefaultProviderTimeoutSecs = 120

func (p *ProviderConfig) setDefaults() { p.TimeoutSecs = DefaultProviderTimeoutSecs }

// AgentConfig is agents.<alias>. ModelProvider is "<family>.<alias>".
type AgentConfig struct {
	ModelProvider string          `toml:"model_provider"`
	RiskProfile   string          `toml:"risk_profile"`
	Workspace     WorkspaceConfig `toml:"workspace"`
	SystemPrompt  string          `toml:"system_prompt"`
	Enabled       *bool           `toml:"enabled"`
	// Env is the whole environment the agent's shell commands see (besides a default PATH); nothing is
	// inherited from the daemon's own environment. A secret field.
	Env map[string]string `toml:"env"`
}

// IsEnabled reports whether the agent is enabled (absent means enabled).
func (a AgentConfig) IsEnabled() bool { return a.Enabled == nil || *a.Enabled }

func (a *AgentConfig) setDefaults() { a.Enabled = new(true) }

// WorkspaceConfig overrides an agent's workspace directory; empty means <install>/agents/<alias>/workspace.
type WorkspaceConfig struct {
	Path string `toml:"path"`
}

// RiskProfile is risk_profiles.<name>: what the tool policy allows without asking.
type RiskProfile struct {
	Level               string   `toml:"level"`
	WorkspaceOnly       bool     `toml:"workspace_only"`
	AutoApprove         []string `toml:"auto_approve"`
	AlwaysAsk           []string `toml:"always_ask"`
	ExcludedTools       []string `toml:"excluded_tools"`
	AllowedTools        []string `toml:"allowed_tools"`
	ForbiddenPaths      []string `toml:"forbidden_paths"`
	BlockedCommands     []string `toml:"blocked_commands"`
	ApprovalTimeoutSecs int      `toml:"approval_timeout_secs"`
}

// setDefaults gives a fresh profile upstream's defaults: supervised and confined to the workspace, so an empty
// [risk_profiles.x] table is valid and safe.
func (r *RiskProfile) setDefaults() {
	r.Level, r.WorkspaceOnly, r.ApprovalTimeoutSecs = LevelSupervised, true, 120
}

// UserConfig is users.<name>: a local uid mapped to permission profiles (protocol.md §8).
type UserConfig struct {
	UID                int      `toml:"uid"`
	PermissionProfiles []string `toml:"permission_profiles"`
}

// PermissionProfile is permission_profiles.<name>: a list of grants such as "config:update:agents.**".
type PermissionProfile struct {
	Grants []string `toml:"grants"`
}

// ChannelsConfig is [channels].
type ChannelsConfig struct {
	SessionBackend string `toml:"session_backend"` // "sqlite" (default) or "jsonl"
}

// GatewayConfig is [gateway]. PairedTokens holds SHA-256 hex hashes and is a secret field.
type GatewayConfig struct {
	Host             string   `toml:"host"`
	Port             int      `toml:"port"`
	RequirePairing   bool     `toml:"require_pairing"`
	AllowRemoteAdmin bool     `toml:"allow_remote_admin"`
	PairedTokens     []string `toml:"paired_tokens"`
}

// ObservabilityConfig is [observability].
type ObservabilityConfig struct {
	LogPersistence string `toml:"log_persistence"` // rolling (default) | full | none
	MaxEntries     int    `toml:"max_entries"`
}

// CostConfig is [cost]: tracking switch, limits and per-model prices (USD per million tokens).
type CostConfig struct {
	Enabled         bool                 `toml:"enabled"`
	DailyLimitUSD   float64              `toml:"daily_limit_usd"`
	MonthlyLimitUSD float64              `toml:"monthly_limit_usd"`
	WarnAtPercent   int                  `toml:"warn_at_percent"`
	Prices          map[string]ModelCost `toml:"prices"`
}

// ModelCost is cost.prices.<model>.
type ModelCost struct {
	InputPerMillion  float64 `toml:"input"`
	OutputPerMillion float64 `toml:"output"`
}

// SecretsConfig is [secrets].
type SecretsConfig struct {
	Encrypt bool `toml:"encrypt"`
}

// RPCConfig is [rpc]: limits of the local JSON-RPC endpoint.
type RPCConfig struct {
	MaxLocalConnections int `toml:"max_local_connections"`
	MaxFrameBytes       int `toml:"max_frame_bytes"`
	InitializeTimeoutMS int `toml:"initialize_timeout_ms"`
	FrameTimeoutMS      int `toml:"frame_timeout_ms"`
	WriteTimeoutMS      int `toml:"write_timeout_ms"`
	// MaxInflightFrameBytes bounds the bytes of inbound frames held at once across all connections.
	MaxInflightFrameBytes int `toml:"max_inflight_frame_bytes"`
}

// LimitsConfig is [limits]: what one agent turn may take from the model. A turn that passes one fails with an
// error naming the key; the provider stream is abandoned at that point.
type LimitsConfig struct {
	// MaxAnswerBytes bounds the answer and reasoning text streamed in one turn, counted as JSON-encoded bytes.
	MaxAnswerBytes int `toml:"max_answer_bytes"`
	// MaxToolArgsBytes bounds the arguments of one tool call.
	MaxToolArgsBytes int `toml:"max_tool_args_bytes"`
	// MaxToolCalls bounds the tool calls of one model response.
	MaxToolCalls int `toml:"max_tool_calls"`
	// MaxToolRounds bounds the model requests of one turn that end in tool calls.
	MaxToolRounds int `toml:"max_tool_rounds"`
}

// Default and largest [limits] values. The largest keep every frame that carries an answer or a tool call
// under the protocol's 8 MiB frame limit.
const (
	DefaultMaxAnswerBytes   = 1 << 20
	DefaultMaxToolArgsBytes = 256 << 10
	DefaultMaxToolCalls     = 32
	DefaultMaxToolRounds    = 16
	MaxMaxAnswerBytes       = 4 << 20
	MaxMaxToolArgsBytes     = 1 << 20
	MaxMaxToolCalls         = 256
	MaxMaxToolRounds        = 256
)

// ACPConfig is [acp].
type ACPConfig struct {
	DefaultAgent string `toml:"default_agent"`
}

// SecurityConfig is [security].
type SecurityConfig struct {
	TrustDaemonUID bool `toml:"trust_daemon_uid"`
}

// defaulter is implemented by map entry types whose fresh entries have non-zero defaults.
type defaulter interface{ setDefaults() }

// base returns the defaults of every non-map field; maps are empty. Decoding a file starts from it.
func base() *Config {
	return &Config{
		Channels:      ChannelsConfig{SessionBackend: "sqlite"},
		Gateway:       GatewayConfig{Host: "127.0.0.1", Port: 42617, RequirePairing: true},
		Observability: ObservabilityConfig{LogPersistence: "rolling", MaxEntries: 10000},
		Cost:          CostConfig{WarnAtPercent: 80},
		Secrets:       SecretsConfig{Encrypt: true},
		RPC: RPCConfig{MaxLocalConnections: 512, MaxFrameBytes: 8388608, InitializeTimeoutMS: 30000,
			FrameTimeoutMS: 30000, WriteTimeoutMS: 30000, MaxInflightFrameBytes: 64 << 20},
		Security: SecurityConfig{TrustDaemonUID: true},
		Limits: LimitsConfig{MaxAnswerBytes: DefaultMaxAnswerBytes, MaxToolArgsBytes: DefaultMaxToolArgsBytes,
			MaxToolCalls: DefaultMaxToolCalls, MaxToolRounds: DefaultMaxToolRounds},
	}
}

// Default returns the config a fresh install runs with: the defaults plus the entries of DefaultTOML.
func Default() *Config {
	c := base()
	c.SchemaVersion = SchemaVersion
	c.Providers.Models = map[string]map[string]ProviderConfig{FamilyEcho: {"default": {Model: "echo", TimeoutSecs: DefaultProviderTimeoutSecs}}}
	c.Agents = map[string]AgentConfig{"default": {ModelProvider: "echo.default", RiskProfile: LevelSupervised, Enabled: new(true)}}
	var rp RiskProfile
	rp.setDefaults()
	c.RiskProfiles = map[string]RiskProfile{LevelSupervised: rp}
	return c
}

const defaultTOML = `schema_version = 3

[providers.models.echo.default]
model = "echo"

[agents.default]
model_provider = "echo.default"
risk_profile = "supervised"

[risk_profiles.supervised]
level = "supervised"
workspace_only = true
`

// DefaultTOML returns the file a fresh install writes (state.md §2); loading it yields Default().
func DefaultTOML() []byte { return []byte(defaultTOML) }
