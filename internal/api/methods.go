package api

// Method names served on the native socket (protocol.md §6).
const (
	MethodInitialize     = "initialize"
	MethodStatus         = "status"
	MethodHealth         = "health"
	MethodTUIList        = "tui/list"
	MethodShutdown       = "shutdown"
	MethodConfigGet      = "config/get"
	MethodConfigSet      = "config/set"
	MethodConfigSetMany  = "config/set-many"
	MethodConfigList     = "config/list"
	MethodConfigDelete   = "config/delete"
	MethodConfigReload   = "config/reload"
	MethodSessionNew     = "session/new"
	MethodSessionPrompt  = "session/prompt"
	MethodSessionCancel  = "session/cancel"
	MethodSessionClose   = "session/close"
	MethodSessionList    = "session/list"
	MethodSessionMsgs    = "session/messages"
	MethodSessionState   = "session/state"
	MethodSessionApprove = "session/approve"
	MethodSessionDelete  = "session/delete"
	MethodSessionKill    = "session/kill"
	// MethodSessionListACP lists the durable ACP sessions (acp-sessions.db) that are not killed.
	MethodSessionListACP = "session/list-acp"

	// NotifyInitialized does not exist in this protocol; as a notification it is ignored.
	NotifyInitialized = "notifications/initialized"
	// NotifySessionUpdate carries turn streaming events (protocol.md §6.2).
	NotifySessionUpdate = "session/update"
	// MethodElicitationCreate is the daemon→client form request (protocol.md §5.1).
	MethodElicitationCreate = "elicitation/create"
)
