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
	SchemaVersion int `toml:"schema_version" desc:"Version of the config schema this file follows."`
	// Locale is upstream's top-level locale: the language of the daemon's user-facing text (doctor findings
	// run inside it). The CLI follows LC_ALL, LC_MESSAGES and LANG instead.
	Locale             string                       `toml:"locale" note:"empty: the daemon's environment (LC_ALL, LC_MESSAGES, LANG), else English" desc:"Language of the daemon's messages: en, fr, ja, es or zh-CN (fr-CA is fr; others are English)."`
	Providers          ProvidersConfig              `toml:"providers"`
	Agents             map[string]AgentConfig       `toml:"agents"`
	RiskProfiles       map[string]RiskProfile       `toml:"risk_profiles"`
	Users              map[string]UserConfig        `toml:"users"`
	PermissionProfiles map[string]PermissionProfile `toml:"permission_profiles"`
	Channels           ChannelsConfig               `toml:"channels"`
	Gateway            GatewayConfig                `toml:"gateway"`
	WSS                WSSConfig                    `toml:"wss"`
	Observability      ObservabilityConfig          `toml:"observability"`
	Cost               CostConfig                   `toml:"cost"`
	Secrets            SecretsConfig                `toml:"secrets"`
	RPC                RPCConfig                    `toml:"rpc"`
	Limits             LimitsConfig                 `toml:"limits"`
	ACP                ACPConfig                    `toml:"acp"`
	Security           SecurityConfig               `toml:"security"`
	Memory             MemoryConfig                 `toml:"memory"`
	Storage            StorageConfig                `toml:"storage"`
	Scheduler          SchedulerConfig              `toml:"scheduler"`
	Reliability        ReliabilityConfig            `toml:"reliability"`
	Cron               map[string]CronJobDecl       `toml:"cron"`
	Skills             SkillsConfig                 `toml:"skills"`
	SkillBundles       map[string]SkillBundleConfig `toml:"skill_bundles"`
	MCP                MCPConfig                    `toml:"mcp"`
	MCPBundles         map[string]MCPBundleConfig   `toml:"mcp_bundles"`
	RuntimeProfiles    map[string]RuntimeProfile    `toml:"runtime_profiles"`
	SOP                SOPConfig                    `toml:"sop"`
	Heartbeat          HeartbeatConfig              `toml:"heartbeat"`
	OnboardState       OnboardStateConfig           `toml:"onboard_state"`
	PeerGroups         map[string]PeerGroupConfig   `toml:"peer_groups"`
}

// OnboardStateConfig is [onboard_state] (upstream's OnboardStateConfig): what the quickstart has done.
type OnboardStateConfig struct {
	CompletedSections   []string `toml:"completed_sections" desc:"Sections an older onboarding recorded as done (kept, read by nothing)."`
	QuickstartCompleted bool     `toml:"quickstart_completed" desc:"Set by a successful quickstart; never reset by it."`
}

// ProvidersConfig holds model providers as providers.models.<family>.<alias>.
type ProvidersConfig struct {
	Models map[string]map[string]ProviderConfig `toml:"models" keys:"echo|openai|ollama|anthropic"`
}

// ProviderConfig is one configured model endpoint. APIKey and ExtraHeaders are secrets.
type ProviderConfig struct {
	APIKey      string   `toml:"api_key" desc:"API key sent to the provider (a secret, stored encrypted)."`
	URI         string   `toml:"uri" desc:"Base URL of the provider's API; empty: the family's default endpoint."`
	Model       string   `toml:"model" desc:"Model name requested from the provider."`
	Temperature *float64 `toml:"temperature" note:"unset: the model's own default" desc:"Sampling temperature."`
	TimeoutSecs int      `toml:"timeout_secs" desc:"Seconds a provider request may take before it fails."`
	// ContextWindow is the model's context window in tokens (upstream's key); turns report it to clients as
	// context_usage.max_context_tokens.
	ContextWindow int               `toml:"context_window" note:"0: unknown (not reported)" desc:"The model's context window (largest input), in tokens."`
	MaxTokens     int               `toml:"max_tokens" note:"0: the family's default, 4096 for anthropic, not sent for the others" desc:"Largest answer, in tokens, asked of the model per request."`
	ExtraHeaders  map[string]string `toml:"extra_headers" desc:"Extra HTTP headers sent with every request to the provider (secrets)."`
	// Pricing is upstream v3's per-provider price list, USD per million tokens: "<model>.input" and
	// "<model>.output", or "<model>" for both (see PriceFor).
	Pricing map[string]float64 `toml:"pricing" desc:"Prices of this provider's models in USD per million tokens, as upstream writes them: \"<model>.input\", \"<model>.output\", or \"<model>\" for both."`
}

// DefaultProviderTimeoutSecs is timeout_secs when a provider entry does not set it.
const DefaultProviderTimeoutSecs = 120

func (p *ProviderConfig) setDefaults() { p.TimeoutSecs = DefaultProviderTimeoutSecs }

// AgentConfig is agents.<alias>. ModelProvider is "<family>.<alias>".
type AgentConfig struct {
	ModelProvider string          `toml:"model_provider" alias:"model_providers" desc:"Model provider the agent uses, as <family>.<alias>."`
	RiskProfile   string          `toml:"risk_profile" alias:"risk_profiles" desc:"Risk profile deciding which tool calls run, ask first or are refused."`
	Workspace     WorkspaceConfig `toml:"workspace"`
	SystemPrompt  string          `toml:"system_prompt" desc:"Instructions given to the model at the start of every conversation."`
	Enabled       *bool           `toml:"enabled" desc:"Whether the agent accepts new sessions."`
	// MaxContextTokens is the budget of a durable ACP session's model context (estimated at 4 bytes a token);
	// past it the context is compacted to its newest turns. 0: never compacted.
	MaxContextTokens int `toml:"max_context_tokens" note:"0: no compaction" desc:"Token budget of an ACP session's model context (about 4 bytes a token); past it the oldest turns leave the context (the transcript is kept)."`
	// Env is the whole environment the agent's shell commands see (besides a default PATH); nothing is
	// inherited from the daemon's own environment. A secret field.
	Env map[string]string `toml:"env" desc:"Environment variables the agent's shell commands see (secrets)."`
	// Memory chooses the agent's memory backend kind (upstream's agents.<alias>.memory).
	Memory AgentMemoryConfig `toml:"memory"`
	// CronJobs binds declarative jobs ([cron.<id>]) to this agent, as upstream's agents.<alias>.cron_jobs.
	CronJobs []string `toml:"cron_jobs" desc:"Ids of the [cron.<id>] jobs that run as this agent."`
	// SkillBundles opts the agent into [skill_bundles.<alias>] entries, searched in this order after the
	// workspace's own skills/ directory.
	SkillBundles []string `toml:"skill_bundles" desc:"Skill bundles ([skill_bundles.<alias>]) whose skills the agent follows, in order."`

	// Delegates and DelegateSameRiskProfile are whom the delegate tool reaches (upstream's roster), when the
	// agent's risk profile allows delegation at all.
	Delegates               []string `toml:"delegates" desc:"Agents this agent may hand work to with the delegate tool (its risk profile must allow delegation)."`
	DelegateSameRiskProfile bool     `toml:"delegate_same_risk_profile" desc:"Also reach every enabled agent that shares this agent's risk profile."`

	// MCPBundles grants MCP servers (deny by default: none listed, no MCP server); ACPEnableMCP connects them
	// in ACP sessions too.
	MCPBundles   []string `toml:"mcp_bundles" alias:"mcp_bundles" desc:"MCP bundles ([mcp_bundles.<alias>]) whose servers the agent may use; empty: no MCP server."`
	ACPEnableMCP bool     `toml:"acp_enable_mcp" desc:"Also give the agent its granted MCP servers in ACP sessions."`

	// Channels are the chat channels this agent answers on, as <type>.<alias> or a bare <type> (upstream's
	// agents.<alias>.channels).
	Channels []string `toml:"channels" desc:"Chat channels this agent answers on: <type>.<alias> (telegram.work) or a bare <type>."`
	// RuntimeProfile names the [runtime_profiles.<alias>] entry (upstream's); only its tool_filter_groups are read.
	RuntimeProfile string `toml:"runtime_profile" alias:"runtime_profiles" desc:"Runtime profile ([runtime_profiles.<alias>]) whose tool_filter_groups choose the MCP tools of each turn."`
}

// IsEnabled reports whether the agent is enabled (absent means enabled).
func (a AgentConfig) IsEnabled() bool { return a.Enabled == nil || *a.Enabled }

func (a *AgentConfig) setDefaults() { a.Enabled = new(true) }

// WorkspaceConfig overrides an agent's workspace directory; empty means <install>/agents/<alias>/workspace.
type WorkspaceConfig struct {
	Path string `toml:"path" desc:"Directory the agent works in; empty: <install>/agents/<alias>/workspace."`
	// ReadMemoryFrom lists other agents whose memories this agent may recall (read-only).
	ReadMemoryFrom []string `toml:"read_memory_from" desc:"Other agents whose memories this agent may recall (read-only)."`
}

// RiskProfile is risk_profiles.<name>: what the tool policy allows without asking.
type RiskProfile struct {
	Level               string           `toml:"level" enum:"readonly|supervised|full" desc:"readonly: no side effects; supervised: ask before risky tool calls; full: run what the lists allow."`
	WorkspaceOnly       bool             `toml:"workspace_only" desc:"Keep file and shell tools inside the agent's workspace."`
	AutoApprove         []string         `toml:"auto_approve" desc:"Tools that run without asking."`
	AlwaysAsk           []string         `toml:"always_ask" desc:"Tools that ask every time, even after allow_always."`
	ExcludedTools       []string         `toml:"excluded_tools" desc:"Tools the model is never offered."`
	AllowedTools        []string         `toml:"allowed_tools" desc:"When set, the only tools the model is offered."`
	ForbiddenPaths      []string         `toml:"forbidden_paths" desc:"Paths the tools may never touch."`
	BlockedCommands     []string         `toml:"blocked_commands" desc:"Shell commands that are always refused."`
	ApprovalTimeoutSecs int              `toml:"approval_timeout_secs" desc:"Seconds an approval request waits for an answer before it is denied."`
	DelegationPolicy    DelegationPolicy `toml:"delegation_policy"`
}

// Delegation modes (upstream's): forbidden, the default, or allow.
const (
	DelegationForbidden = "forbidden"
	DelegationAllow     = "allow"
)

// DelegationPolicy is risk_profiles.<name>.delegation_policy: whether agents with the profile may use the
// delegate tool.
type DelegationPolicy struct {
	Mode string `toml:"mode" enum:"forbidden|allow" desc:"allow: agents with this profile get the delegate tool; forbidden (default): they do not."`
}

// setDefaults gives a fresh profile upstream's defaults: supervised and confined to the workspace, so an empty
// [risk_profiles.x] table is valid and safe.
func (r *RiskProfile) setDefaults() {
	r.Level, r.WorkspaceOnly, r.ApprovalTimeoutSecs = LevelSupervised, true, 120
}

// UserConfig is users.<name>: a local uid mapped to permission profiles (protocol.md §8).
type UserConfig struct {
	UID                int      `toml:"uid" desc:"Unix uid of the local user this entry names."`
	PermissionProfiles []string `toml:"permission_profiles" desc:"Permission profiles whose grants the user gets."`
}

// PermissionProfile is permission_profiles.<name>: a list of grants such as "config:update:agents.**".
type PermissionProfile struct {
	Grants []string `toml:"grants" desc:"Grants such as config:read or config:update:agents.**; admin reaches everything."`
	// MaxRisk caps the tool calls its principal may approve: "low", "medium" or "high" ("" : no cap). A call
	// of a higher risk is the owner's to approve.
	MaxRisk string `toml:"max_risk" desc:"Highest risk (low, medium, high) of a tool call this profile's principals may approve; a riskier call waits for the owner. Empty: no cap."`
	// AllowedAgents and AllowedTools are upstream's selectors (crates/zeroclaw-config PermissionProfileConfig):
	// when the key is set, the profile's principals may use only the agents (sessions of them, on every
	// surface) and the tools (offered to and run in their turns) it names, "*" being every one, and [] none.
	// An absent key restricts nothing (our list-form profiles predate them). A principal's profiles are a
	// union: a profile without the key lifts the restriction. nil is absent; an empty list is kept in the file.
	AllowedAgents []string `toml:"allowed_agents" empty:"kept" note:"absent: every agent; []: none" desc:"Agents this profile's principals may open and prompt sessions of (\"*\": every agent). Absent: every agent."`
	AllowedTools  []string `toml:"allowed_tools" empty:"kept" note:"absent: every tool; []: none" desc:"Tools the turns of this profile's principals may offer and run (\"*\": every tool); the agent's risk profile still applies. Absent: every tool."`
}

// ChannelsConfig is [channels].
type ChannelsConfig struct {
	SessionBackend string `toml:"session_backend" enum:"sqlite|jsonl" desc:"Where chat sessions are stored: sqlite (sessions.db) or jsonl files."`
	// MQTT and Filesystem are the SOP trigger fan-ins (internal/sop/trigger), see sop.go.
	MQTT       map[string]MQTTConfig       `toml:"mqtt"`
	Filesystem map[string]FilesystemConfig `toml:"filesystem"`
	// The chat-channel globals and adapters (internal/channel), see channels.go.
	MessageTimeoutSecs      int                       `toml:"message_timeout_secs" desc:"Seconds one channel turn may take (at least 30) before it is answered with a timeout error."`
	MaxConcurrentPerChannel int                       `toml:"max_concurrent_per_channel" desc:"Turns one channel runs at once (all channels together: this times the channel count, clamped to 8..64)."`
	Telegram                map[string]TelegramConfig `toml:"telegram"`
	// IRC and Email are the other adapters (internal/channel/irc, internal/channel/email), see channels_more.go.
	IRC   map[string]IRCConfig   `toml:"irc"`
	Email map[string]EmailConfig `toml:"email"`
	// Matrix is internal/channel/matrix, see channels_matrix.go.
	Matrix map[string]MatrixConfig `toml:"matrix"`
	// Slack is internal/channel/slack, see channels_slack.go.
	Slack map[string]SlackConfig `toml:"slack"`
	// Discord is the Discord gateway adapter (internal/channel/discord), see channels_discord.go.
	Discord map[string]DiscordConfig `toml:"discord"`
}

// GatewayConfig is [gateway] (upstream/gateway.md §5). PairedTokens holds SHA-256 hex hashes and is a secret
// field.
type GatewayConfig struct {
	Host             string   `toml:"host" desc:"Address the HTTP gateway listens on."`
	Port             int      `toml:"port" note:"0: a port the kernel picks" desc:"TCP port of the HTTP gateway."`
	RequirePairing   bool     `toml:"require_pairing" desc:"Require a paired bearer token on gateway requests."`
	AllowRemoteAdmin bool     `toml:"allow_remote_admin" desc:"Allow admin requests from gateway clients that are not on loopback."`
	PairedTokens     []string `toml:"paired_tokens" desc:"SHA-256 hashes of the paired gateway tokens."`
	AllowPublicBind  bool     `toml:"allow_public_bind" desc:"Bind a non-loopback host without the startup warning."`
	// DevicePermissionProfiles are the grants of a paired device (auth's grant model); empty: a device may do
	// everything, as upstream lets any token.
	DevicePermissionProfiles []string `toml:"device_permission_profiles" note:"empty: paired devices are admin, as upstream" desc:"Permission profiles whose grants a paired device gets."`
	// PairedTokenProfiles restrict single devices: "<token sha256>:<profile>" entries, written when a device pairs
	// with a code made by `zeroclaw pair code --profile NAME` (and removed with its token). Such a device gets
	// that profile's grants instead of device_permission_profiles'.
	PairedTokenProfiles []string `toml:"paired_token_profiles" note:"written by pairing; edit only to remove entries" desc:"Per-device permission profiles, as <token sha256>:<profile> entries."`
	// AllowedHosts are the Host names (besides the loopback names and the bound address) the gateway answers:
	// any other Host is refused (DNS rebinding).
	AllowedHosts []string `toml:"allowed_hosts" note:"loopback names, IP literals of the bound address and these names are accepted" desc:"Extra Host names the gateway answers, e.g. zeroclaw.example.net (a name reaching it through a proxy)."`
	// AllowedOrigins are the browser origins, beyond the gateway's own, allowed to change state or open a
	// WebSocket.
	AllowedOrigins            []string         `toml:"allowed_origins" note:"empty: only the gateway's own origin" desc:"Extra browser origins (scheme://host[:port]) allowed to send state-changing requests and open WebSockets."`
	PairRateLimitPerMinute    int              `toml:"pair_rate_limit_per_minute" desc:"Pairing requests one client may make per minute."`
	WebhookRateLimitPerMin    int              `toml:"webhook_rate_limit_per_minute" desc:"Webhook requests one client may make per minute."`
	TrustForwardedHeaders     bool             `toml:"trust_forwarded_headers" desc:"Take the client address from X-Forwarded-For / X-Real-IP (only behind a trusted proxy)."`
	PathPrefix                string           `toml:"path_prefix" note:"empty: routes at the root" desc:"Prefix every gateway route is served under, e.g. /zeroclaw."`
	RateLimitMaxKeys          int              `toml:"rate_limit_max_keys" desc:"Clients each rate limiter tracks at most."`
	IdempotencyTTLSecs        int              `toml:"idempotency_ttl_secs" desc:"Seconds a webhook idempotency key is remembered."`
	IdempotencyMaxKeys        int              `toml:"idempotency_max_keys" desc:"Webhook idempotency keys remembered at most."`
	RequestTimeoutSecs        int              `toml:"request_timeout_secs" desc:"Seconds a gateway request may take before it is answered 408."`
	LongRunningTimeoutSecs    int              `toml:"long_running_request_timeout_secs" desc:"Seconds a long-running gateway request (a webhook turn) may take."`
	WebhookSecret             string           `toml:"webhook_secret" note:"empty: no X-Webhook-Secret check" desc:"Secret a POST /webhook must carry in X-Webhook-Secret (a secret)."`
	TLS                       GatewayTLSConfig `toml:"tls"`
	WebSocketPingIntervalSecs int              `toml:"websocket_ping_interval_secs" note:"0: no pings" desc:"Seconds between the pings /ws/chat sends to keep an idle socket alive."`
	// The bounds of issue 20 (fds, slow bodies, forwarded client keys, the pairing code's failure budget).
	MaxConnections           int      `toml:"max_connections" note:"0: 512, or fewer when RLIMIT_NOFILE is low" desc:"Most TCP connections the gateway (and [wss]) hold at once; more are answered 503 and closed at accept."`
	BodyMinBytesPerSec       int      `toml:"body_min_bytes_per_sec" note:"0: only request_timeout_secs bounds a body" desc:"Slowest rate a request body may arrive at (after a 5 s grace); slower is cut with 408 and the connection closed."`
	TrustedProxies           []string `toml:"trusted_proxies" note:"empty: loopback (a proxy on this host)" desc:"IPs or CIDRs of the proxies whose X-Forwarded-For hops are trusted (with trust_forwarded_headers)."`
	PairingFailureBudget     int      `toml:"pairing_failure_budget" desc:"Wrong pairing codes, from all clients together, after which the pending code is replaced and pairing pauses until the window ends."`
	PairingFailureWindowSecs int      `toml:"pairing_failure_window_secs" desc:"Seconds of the window pairing_failure_budget counts in."`
	MetricsRequireToken      bool     `toml:"metrics_require_token" desc:"Serve GET /metrics only to a request with a paired token (needs require_pairing)."`
	// WebDistDir is a built web dashboard (upstream's web/dist): its files under /_app/, its index.html for
	// every other GET outside /api/ (the dashboard's own pages), with window.__ZEROCLAW_BASE__ set to path_prefix.
	WebDistDir string `toml:"web_dist_dir" note:"empty: no dashboard" desc:"Absolute path of a built web dashboard (upstream's web/dist) served under /_app/ and at the gateway's other pages."`
}

// WSSConfig is [wss]: the native RPC protocol over WebSocket on a TLS listener of its own, for remote TUIs.
type WSSConfig struct {
	Enabled  bool   `toml:"enabled" desc:"Serve the native RPC protocol over TLS WebSocket (remote TUIs)."`
	Bind     string `toml:"bind" desc:"Address the WSS listener binds."`
	Port     int    `toml:"port" note:"0: a port the kernel picks" desc:"TCP port of the WSS listener."`
	CertPath string `toml:"cert_path" desc:"PEM certificate chain of the WSS listener."`
	KeyPath  string `toml:"key_path" desc:"PEM private key of the WSS listener."`
}

// GatewayTLSConfig is [gateway.tls]: HTTPS, and optionally client certificates (mTLS).
type GatewayTLSConfig struct {
	Enabled    bool                    `toml:"enabled" desc:"Serve the gateway over HTTPS."`
	CertPath   string                  `toml:"cert_path" desc:"PEM certificate chain of the gateway."`
	KeyPath    string                  `toml:"key_path" desc:"PEM private key of the gateway."`
	ClientAuth GatewayClientAuthConfig `toml:"client_auth"`
}

// GatewayClientAuthConfig is [gateway.tls.client_auth].
type GatewayClientAuthConfig struct {
	Enabled           bool   `toml:"enabled" desc:"Verify client certificates against ca_cert_path."`
	CACertPath        string `toml:"ca_cert_path" desc:"PEM CA certificates that sign accepted client certificates."`
	RequireClientCert bool   `toml:"require_client_cert" desc:"Refuse clients without a certificate (otherwise one is verified when presented)."`
}

// ObservabilityConfig is [observability]: the runtime event log (upstream's log_persistence keys).
type ObservabilityConfig struct {
	LogPersistence string `toml:"log_persistence" enum:"rolling|rotating|full|none" desc:"How runtime events are kept in data/state/runtime-trace.jsonl: rolling (the newest log_persistence_max_entries), rotating, full or none (live subscribers still get them)."`
	// LogPersistenceMaxEntries is upstream's key; 0 falls back to the older max_entries, then to 200.
	LogPersistenceMaxEntries int `toml:"log_persistence_max_entries" note:"0: max_entries if set, else 200" desc:"Events kept when log_persistence is rolling."`
	// MaxEntries is this project's earlier name for log_persistence_max_entries, still read.
	MaxEntries                 int   `toml:"max_entries" note:"deprecated: use log_persistence_max_entries" desc:"Older name of log_persistence_max_entries."`
	LogPersistenceMaxBytes     int64 `toml:"log_persistence_max_bytes" note:"0: no size limit" desc:"Rotating mode: start a new file once the current one reaches this many bytes."`
	LogPersistenceRotateDaily  bool  `toml:"log_persistence_rotate_daily" desc:"Rotating mode: start a new file at each UTC day boundary."`
	LogPersistenceRetentionMax int   `toml:"log_persistence_retention_max_files" note:"0: keep all" desc:"Rotating mode: rotated files kept."`
}

// DefaultLogMaxEntries is log_persistence_max_entries when neither it nor max_entries is set (upstream's
// config default).
const DefaultLogMaxEntries = 200

// RollingMaxEntries is the number of events rolling persistence keeps: log_persistence_max_entries, else the
// older max_entries, else DefaultLogMaxEntries.
func (o ObservabilityConfig) RollingMaxEntries() int {
	switch {
	case o.LogPersistenceMaxEntries > 0:
		return o.LogPersistenceMaxEntries
	case o.MaxEntries > 0:
		return o.MaxEntries
	}
	return DefaultLogMaxEntries
}

// CostConfig is [cost]: tracking switch, limits and per-model prices (USD per million tokens).
type CostConfig struct {
	Enabled         bool                 `toml:"enabled" desc:"Record the token usage and cost of model requests."`
	DailyLimitUSD   float64              `toml:"daily_limit_usd" note:"0: no daily limit" desc:"Daily (UTC) spending limit in USD: past it, the next model request is refused."`
	MonthlyLimitUSD float64              `toml:"monthly_limit_usd" note:"0: no monthly limit" desc:"Monthly (UTC) spending limit in USD: past it, the next model request is refused."`
	WarnAtPercent   int                  `toml:"warn_at_percent" desc:"Warn when spending reaches this percentage of a limit."`
	Prices          map[string]ModelCost `toml:"prices"`
}

// ModelCost is cost.prices.<model>.
type ModelCost struct {
	InputPerMillion       float64 `toml:"input" desc:"USD per million input tokens of this model."`
	OutputPerMillion      float64 `toml:"output" desc:"USD per million output tokens of this model."`
	CachedInputPerMillion float64 `toml:"cached_input" note:"0: the input price" desc:"USD per million cached input tokens of this model."`
}

// SecretsConfig is [secrets].
type SecretsConfig struct {
	Encrypt bool `toml:"encrypt" desc:"Store secret values encrypted with the install's .secret_key."`
}

// RPCConfig is [rpc]: limits of the local JSON-RPC endpoint.
type RPCConfig struct {
	MaxLocalConnections int `toml:"max_local_connections" desc:"Most connections the local socket holds at once."`
	MaxFrameBytes       int `toml:"max_frame_bytes" desc:"Largest JSON-RPC frame (one line), in bytes."`
	InitializeTimeoutMS int `toml:"initialize_timeout_ms" desc:"Milliseconds a new connection has to complete initialize."`
	FrameTimeoutMS      int `toml:"frame_timeout_ms" desc:"Milliseconds a frame may take to arrive once its first byte came."`
	WriteTimeoutMS      int `toml:"write_timeout_ms" desc:"Milliseconds a client may stop reading before it is disconnected."`
	// MaxInflightFrameBytes bounds the bytes of inbound frames held at once across all connections.
	MaxInflightFrameBytes int `toml:"max_inflight_frame_bytes" desc:"Bytes of inbound frames held at once across all connections."`
	// ServerVersion is the server_version initialize and status advertise ("" : api.ServerVersion). zerocode
	// 0.8.2–0.8.4 refuse a daemon whose server_version is not their own release; this lets one connect.
	ServerVersion string `toml:"server_version" desc:"server_version that initialize and status advertise; empty: 0.8.6, the release whose protocol we speak. Set it to an older zerocode's own version (0.8.2-0.8.4 refuse any other)."`
}

// LimitsConfig is [limits]: what one agent turn may take from the model. A turn that passes one fails with an
// error naming the key; the provider stream is abandoned at that point.
type LimitsConfig struct {
	// MaxAnswerBytes bounds the answer and reasoning text streamed in one turn, counted as JSON-encoded bytes.
	MaxAnswerBytes int `toml:"max_answer_bytes" desc:"Bytes of answer and reasoning text one turn may stream."`
	// MaxToolArgsBytes bounds the arguments of one tool call.
	MaxToolArgsBytes int `toml:"max_tool_args_bytes" desc:"Bytes of arguments one tool call may carry."`
	// MaxToolCalls bounds the tool calls of one model response.
	MaxToolCalls int `toml:"max_tool_calls" desc:"Tool calls one model response may make."`
	// MaxToolRounds bounds the model requests of one turn that end in tool calls.
	MaxToolRounds int `toml:"max_tool_rounds" desc:"Model requests ending in tool calls one turn may make."`
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
	DefaultAgent string `toml:"default_agent" alias:"agents" desc:"Agent of ACP sessions that name none."`
	// AllowedRoots are the directories (absolute, ~ expanded) below which the owner may open an ACP session whose
	// cwd lies outside the agent's workspace. Empty: every ACP session works in its agent's workspace.
	AllowedRoots []string `toml:"allowed_roots" desc:"Absolute directories below which the owner may choose an ACP session's cwd outside the agent's workspace; empty: none."`
	// MaxSessions caps the sessions (chat and ACP) kept live in memory at once. Upstream's key (its default 10
	// refuses the next session); here an idle session makes room and comes back from the store at the next call
	// naming it, and a call that finds every live session busy waits for one to become idle.
	MaxSessions int `toml:"max_sessions" desc:"Sessions kept live in memory at once; an idle one is dropped to make room and comes back from the store when next used."`
	// SessionTimeoutSecs is how long an idle session stays live before it is dropped from memory (it comes
	// back from the store when next used). Upstream's key; its default is 3600.
	SessionTimeoutSecs int `toml:"session_timeout_secs" desc:"Seconds an idle session stays in memory before it is dropped (it comes back from the store when next used)."`
}

// Default [acp] session limits (ours: upstream's are 10 and 3600).
const (
	DefaultACPMaxSessions        = 64
	DefaultACPSessionTimeoutSecs = 600
	MaxACPMaxSessions            = 100000
)

// SecurityConfig is [security].
type SecurityConfig struct {
	TrustDaemonUID bool `toml:"trust_daemon_uid" desc:"Treat peers with the daemon's own uid as the shared operator (admin)."`
}

// SchedulerConfig is [scheduler]: the cron scheduler (upstream/cron-logs-costs.md §A6).
type SchedulerConfig struct {
	Enabled          bool `toml:"enabled" desc:"Run scheduled jobs."`
	MaxTasks         int  `toml:"max_tasks" desc:"Most due jobs started by one scheduler tick."`
	MaxConcurrent    int  `toml:"max_concurrent" desc:"Most jobs running at once."`
	CatchUpOnStartup bool `toml:"catch_up_on_startup" desc:"Run each job that fell due while the daemon was down once at start (false: skip to the next occurrence)."`
	MaxRunHistory    int  `toml:"max_run_history" desc:"Runs kept per job in the run history."`
}

// ReliabilityConfig is [reliability]: the scheduler's tick and retries (upstream's keys).
type ReliabilityConfig struct {
	SchedulerPollSecs int `toml:"scheduler_poll_secs" desc:"Seconds between scheduler ticks (at least 5)."`
	SchedulerRetries  int `toml:"scheduler_retries" desc:"Extra attempts of a failed scheduled job."`
	ProviderBackoffMS int `toml:"provider_backoff_ms" desc:"First retry delay in milliseconds (at least 200), doubled per attempt."`
	// The channel listeners' restart backoff (upstream's keys).
	ChannelInitialBackoffSecs int `toml:"channel_initial_backoff_secs" note:"0: 2" desc:"Seconds before a failed channel listener first restarts (doubled per failure)."`
	ChannelMaxBackoffSecs     int `toml:"channel_max_backoff_secs" note:"0: 60" desc:"Longest wait between restarts of a failing channel listener."`
}

// CronJobDecl is cron.<id>: a job declared in config, reconciled into jobs.db at start and on reload.
type CronJobDecl struct {
	Name              string           `toml:"name" desc:"Display name of the job."`
	JobType           string           `toml:"job_type" enum:"shell|agent" desc:"shell runs command; agent runs prompt as a turn."`
	Schedule          CronScheduleDecl `toml:"schedule"`
	Command           string           `toml:"command" desc:"Shell command of a shell job, run in the agent's workspace."`
	Prompt            string           `toml:"prompt" desc:"Prompt of an agent job."`
	Enabled           bool             `toml:"enabled" desc:"Whether the job runs."`
	Model             string           `toml:"model" desc:"Model override of an agent job."`
	AllowedTools      []string         `toml:"allowed_tools" desc:"Tools an agent job may use; empty: the agent's."`
	UsesMemory        bool             `toml:"uses_memory" desc:"Whether an agent job uses memory."`
	SessionTarget     string           `toml:"session_target" desc:"isolated (a new session per run), main, or a session id."`
	ShellOutputFormat string           `toml:"shell_output_format" enum:"wrapped|raw" desc:"wrapped: status, stdout and stderr; raw: stdout alone on success."`
}

func (d *CronJobDecl) setDefaults() {
	d.JobType, d.Enabled, d.UsesMemory, d.ShellOutputFormat = "shell", true, true, "wrapped"
}

// CronScheduleDecl is cron.<id>.schedule: {kind = "cron", expr, tz} | {kind = "every", every_ms} | {kind = "at", at}.
type CronScheduleDecl struct {
	Kind    string `toml:"kind" enum:"cron|every|at" desc:"cron (expr, tz), every (every_ms) or at (a one-shot time)."`
	Expr    string `toml:"expr" desc:"Cron expression (5 fields, or 6-7 with seconds and year)."`
	TZ      string `toml:"tz" desc:"IANA time zone of expr; empty: the host's."`
	EveryMS int    `toml:"every_ms" desc:"Interval in milliseconds."`
	At      string `toml:"at" desc:"RFC 3339 time of a one-shot job."`
}

// defaulter is implemented by map entry types whose fresh entries have non-zero defaults.
type defaulter interface{ setDefaults() }

// base returns the defaults of every non-map field; maps are empty. Decoding a file starts from it.
func base() *Config {
	return &Config{
		Channels: ChannelsConfig{SessionBackend: "sqlite", MessageTimeoutSecs: 300, MaxConcurrentPerChannel: 4},
		Gateway: GatewayConfig{Host: "127.0.0.1", Port: 42617, RequirePairing: true, PairRateLimitPerMinute: 10,
			WebhookRateLimitPerMin: 60, RateLimitMaxKeys: 10000, IdempotencyTTLSecs: 300, IdempotencyMaxKeys: 10000,
			RequestTimeoutSecs: 30, LongRunningTimeoutSecs: 600, WebSocketPingIntervalSecs: 30,
			BodyMinBytesPerSec: 1024, PairingFailureBudget: 20, PairingFailureWindowSecs: 300},
		WSS:           WSSConfig{Bind: "0.0.0.0", Port: 9781},
		Observability: ObservabilityConfig{LogPersistence: "rolling", LogPersistenceRotateDaily: true, LogPersistenceRetentionMax: 7},
		Cost:          CostConfig{Enabled: true, DailyLimitUSD: 10, MonthlyLimitUSD: 100, WarnAtPercent: 80},
		Secrets:       SecretsConfig{Encrypt: true},
		RPC: RPCConfig{MaxLocalConnections: 512, MaxFrameBytes: 8388608, InitializeTimeoutMS: 30000,
			FrameTimeoutMS: 30000, WriteTimeoutMS: 30000, MaxInflightFrameBytes: 64 << 20},
		Security: SecurityConfig{TrustDaemonUID: true},
		ACP:      ACPConfig{MaxSessions: DefaultACPMaxSessions, SessionTimeoutSecs: DefaultACPSessionTimeoutSecs},
		Memory:   DefaultMemory(),
		Storage:  StorageConfig{Backend: "sqlite", ClaimTTLSecs: DefaultClaimTTLSecs},
		Skills:   SkillsConfig{PromptInjectionMode: SkillsModeFull},
		MCP:      MCPConfig{Enabled: true},
		Scheduler: SchedulerConfig{Enabled: true, MaxTasks: 64, MaxConcurrent: 4, CatchUpOnStartup: true,
			MaxRunHistory: 50},
		Reliability: ReliabilityConfig{SchedulerPollSecs: 15, SchedulerRetries: 2, ProviderBackoffMS: 500},
		Limits: LimitsConfig{MaxAnswerBytes: DefaultMaxAnswerBytes, MaxToolArgsBytes: DefaultMaxToolArgsBytes,
			MaxToolCalls: DefaultMaxToolCalls, MaxToolRounds: DefaultMaxToolRounds},
		SOP:       DefaultSOP(),
		Heartbeat: DefaultHeartbeat(),
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
