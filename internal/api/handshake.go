package api

import "encoding/json"

// InitializeParams are the params of initialize (protocol.md §3). protocol_version defaults to 1.
type InitializeParams struct {
	ProtocolVersion    *int              `json:"protocol_version,omitempty"`
	ClientCapabilities json.RawMessage   `json:"clientCapabilities,omitempty"`
	TUIID              string            `json:"tui_id,omitempty"`
	TUISig             string            `json:"tui_sig,omitempty"`
	Env                map[string]string `json:"env,omitempty"`
	// AuthToken, when present, is the credential the connection binds with (upstream's newer handshake): a
	// paired gateway token, whose device the connection then acts as. Any other value is refused -32010; it
	// never falls back to the transport's principal.
	AuthToken *string `json:"auth_token,omitempty"`
}

// InitializeResult is the result of initialize: upstream's fields, the camelCase twins that keep the seed's
// quick test literal, and ours (build_version, principal_id).
type InitializeResult struct {
	ProtocolVersion      int                 `json:"protocol_version"`
	ServerVersion        string              `json:"server_version"`
	ProtocolVersionCamel int                 `json:"protocolVersion"`
	ServerVersionCamel   string              `json:"serverVersion"`
	BuildVersion         string              `json:"build_version"`
	ServerPID            int                 `json:"server_pid"`
	TUIID                string              `json:"tui_id"`
	PrincipalID          string              `json:"principal_id"`
	Capabilities         []string            `json:"capabilities"`
	Commands             []CommandDescriptor `json:"commands"`
	// Extensions lists our extensions beyond upstream's protocol that the client asked for in
	// clientCapabilities and this connection has enabled (ExtBinaryUploadChunks); absent when none.
	Extensions []string `json:"extensions,omitempty"`
}

// ExtBinaryUploadChunks is the extension a client asks for with clientCapabilities.binary_upload_chunks = true
// (on a local socket): a file/upload/chunk whose params carry data_len (1..UploadChunkBytes) instead of data_b64
// is followed on the stream, right after its line, by exactly data_len raw bytes of the chunk.
const ExtBinaryUploadChunks = "binary_upload_chunks"

// CommandDescriptor is one slash command a TUI offers (upstream's commands_for_surface): a stable id, the
// canonical name without the slash, and other names accepted for it.
type CommandDescriptor struct {
	ID      string   `json:"id"`
	Name    string   `json:"name"`
	Aliases []string `json:"aliases,omitempty"`
}

// TUICommands are the commands of the TUI surface, as upstream advertises them: /help (handled by the client),
// /new (a new session), /model (the session's model).
func TUICommands() []CommandDescriptor {
	return []CommandDescriptor{
		{ID: "help", Name: "help"},
		{ID: "new", Name: "new", Aliases: []string{"new-session"}},
		{ID: "model", Name: "model"},
	}
}

// HandshakeOnly counts the connections that closed right after a successful initialize without any other call
// (doctor/run reports them): an older zerocode (0.8.2–0.8.4) does so when server_version is not its own
// release. ServerVersion is what initialize advertises (rpc.server_version).
type HandshakeOnly struct {
	Count         int    `json:"count"`
	LastAt        string `json:"last_at"`
	ServerVersion string `json:"server_version"`
}

// VersionMismatchData is the data of a -32011 error.
type VersionMismatchData struct {
	Reason          string `json:"reason"`
	Client          int    `json:"client"`
	ServerSupported []int  `json:"server_supported"`
	ServerVersion   string `json:"server_version"`
}

// StatusResult is the result of status: upstream's fields, then ours (build_version, pid, uptime_secs,
// data_dir, gateway).
type StatusResult struct {
	ServerVersion    string   `json:"server_version"`
	ProtocolVersion  int      `json:"protocol_version"`
	ActiveSessions   int      `json:"active_sessions"`
	SessionIDs       []string `json:"session_ids"`
	ConfigDir        string   `json:"config_dir"`
	ConfigFile       string   `json:"config_file"`
	ConfigKind       string   `json:"config_kind"` // ConfigKindDefault | ConfigKindCustom | ConfigKindTemporary
	LocalIPCEndpoint string   `json:"local_ipc_endpoint"`

	BuildVersion string `json:"build_version"`
	PID          int    `json:"pid"`
	UptimeSecs   int64  `json:"uptime_secs"`
	DataDir      string `json:"data_dir"`
	// Gateway is the HTTP gateway's state; absent from a daemon that does not report it.
	Gateway *GatewayStatus `json:"gateway,omitempty"`
	// Sop is the SOP runtime's state; absent when the runtime is off ([sop] sops_dir unset).
	Sop *SopStatus `json:"sop,omitempty"`
	// Heartbeat is the heartbeat's state; absent while [heartbeat] is simply off (present, with its problem,
	// when a bad [heartbeat] turned it off).
	Heartbeat *HeartbeatStatus `json:"heartbeat,omitempty"`
	// Channels are the chat channels' states; absent when none is configured.
	Channels []ChannelBrief `json:"channels,omitempty"`
	// Storage is the shared [storage] backend: peers seen and claims running; absent with sqlite.
	Storage *StorageStatus `json:"storage,omitempty"`
}

// SopStatus is status.sop: where SOP runs are kept, and loudly, when they are not durable although that was
// not asked for (runs.db could not be opened: Warning says why).
type SopStatus struct {
	Store       string `json:"store"` // sqlite | memory
	Durable     bool   `json:"durable"`
	Path        string `json:"path,omitempty"`    // runs.db when durable
	Warning     string `json:"warning,omitempty"` // why runs fell back to memory
	Loaded      int    `json:"loaded"`            // SOPs loaded
	Disabled    int    `json:"disabled"`          // SOPs that failed to load
	ActiveRuns  int    `json:"active_runs"`
	WaitingRuns int    `json:"waiting_runs"` // parked at a gate
}

// GatewayStatus is status.gateway: whether the HTTP gateway serves, where, and why not.
type GatewayStatus struct {
	State string `json:"state"`          // GatewayServed | GatewayNotServed | GatewayDisabled
	Addr  string `json:"addr,omitempty"` // host:port bound (served), or the address it failed to bind (not_served)
	URL   string `json:"url,omitempty"`  // scheme://addr/prefix of a served gateway
	// Error says why the gateway is not served (not_served), why it is disabled, or, while served, why the
	// last reload could not move it to a new address.
	Error string `json:"error,omitempty"`
}

// Values of status.gateway.state.
const (
	GatewayServed    = "served"
	GatewayNotServed = "not_served"
	GatewayDisabled  = "disabled"
)

// Values of status.config_kind (upstream's RuntimeConfigKind): the default install (~/.zeroclaw), one under the
// system's temporary directory, or any other chosen with --config-dir or the environment.
const (
	ConfigKindDefault   = "default"
	ConfigKindCustom    = "custom"
	ConfigKindTemporary = "temporary"
)

// HealthResult is a snapshot of component health.
type HealthResult struct {
	Status     string                     `json:"status"`
	UptimeSecs int64                      `json:"uptime_secs"`
	Components map[string]ComponentHealth `json:"components"`
}

// ComponentHealth is one component's current observation.
type ComponentHealth struct {
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// TUIInfo describes one connected, initialized client. ConnectedAt is RFC 3339, ConnectedAtUnix the same
// instant in seconds.
type TUIInfo struct {
	TUIID           string `json:"tui_id"`
	ConnectedAt     string `json:"connected_at"`
	ConnectedAtUnix int64  `json:"connected_at_unix"`
	PeerLabel       string `json:"peer_label"`
	Transport       string `json:"transport"`
}

// TUIListResult is the result of tui/list.
type TUIListResult struct {
	TUIs []TUIInfo `json:"tuis"`
}

// ShutdownResult is the result of shutdown.
type ShutdownResult struct {
	ShuttingDown bool `json:"shutting_down"`
}
