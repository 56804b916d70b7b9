package api

import "encoding/json"

// InitializeParams are the params of initialize (protocol.md §3). protocol_version defaults to 1.
type InitializeParams struct {
	ProtocolVersion    *int              `json:"protocol_version,omitempty"`
	ClientCapabilities json.RawMessage   `json:"clientCapabilities,omitempty"`
	TUIID              string            `json:"tui_id,omitempty"`
	TUISig             string            `json:"tui_sig,omitempty"`
	Env                map[string]string `json:"env,omitempty"`
}

// InitializeResult is the result of initialize. The camelCase twins keep the seed's quick test literal.
type InitializeResult struct {
	ProtocolVersion      int      `json:"protocol_version"`
	ServerVersion        string   `json:"server_version"`
	ProtocolVersionCamel int      `json:"protocolVersion"`
	ServerVersionCamel   string   `json:"serverVersion"`
	ServerPID            int      `json:"server_pid"`
	TUIID                string   `json:"tui_id"`
	Capabilities         []string `json:"capabilities"`
	Commands             []string `json:"commands"`
}

// VersionMismatchData is the data of a -32011 error.
type VersionMismatchData struct {
	Reason          string `json:"reason"`
	Client          int    `json:"client"`
	ServerSupported []int  `json:"server_supported"`
	ServerVersion   string `json:"server_version"`
}

// StatusResult is the result of status.
type StatusResult struct {
	ServerVersion    string   `json:"server_version"`
	ProtocolVersion  int      `json:"protocol_version"`
	PID              int      `json:"pid"`
	UptimeSecs       int64    `json:"uptime_secs"`
	ActiveSessions   int      `json:"active_sessions"`
	SessionIDs       []string `json:"session_ids"`
	ConfigDir        string   `json:"config_dir"`
	DataDir          string   `json:"data_dir"`
	LocalIPCEndpoint string   `json:"local_ipc_endpoint"`
}

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

// TUIInfo describes one connected, initialized client.
type TUIInfo struct {
	TUIID       string `json:"tui_id"`
	ConnectedAt string `json:"connected_at"`
	PeerLabel   string `json:"peer_label"`
	Transport   string `json:"transport"`
}

// TUIListResult is the result of tui/list.
type TUIListResult struct {
	TUIs []TUIInfo `json:"tuis"`
}

// ShutdownResult is the result of shutdown.
type ShutdownResult struct {
	ShuttingDown bool `json:"shutting_down"`
}
