package api

// Grants are the permission names a principal's permission profile lists and each method, route and tool
// requires (protocol.md §8): "<resource>:<verb>", and admin. They are spelled here only; every package names a
// grant through these constants.
const (
	// GrantAdmin reaches everything (and alone: shutdown, pair/code, devices/rotate, tools' env).
	GrantAdmin = "admin"

	GrantStatusRead = "status:read"
	GrantHealthRead = "health:read"
	GrantTUIRead    = "tui:read"

	GrantSessionsCreate  = "sessions:create"
	GrantSessionsExecute = "sessions:execute" // session/prompt, the webhook's turns, /ws/chat
	GrantSessionsRead    = "sessions:read"
	GrantSessionsDelete  = "sessions:delete"

	// GrantFilesRead lists workspace directories (fs/list_dir).
	GrantFilesRead = "files:read"
	// GrantFilesCreate stores files in a session's workspace: file/attach, the upload methods and session/prompt
	// attachments.
	GrantFilesCreate = "files:create"

	GrantConfigRead = "config:read"
	// GrantConfigUpdate is the one grant that may carry a scope: config:update:<pattern> covers the property
	// paths matching the pattern (see config.ParsePattern); unscoped config:update covers every path.
	GrantConfigUpdate = "config:update"
	GrantConfigReload = "config:reload"

	// GrantMemoryRead and GrantMemoryWrite reach memories: the memory/* methods, and the memory tools and
	// recall of a turn run for the principal.
	GrantMemoryRead  = "memory:read"
	GrantMemoryWrite = "memory:write"

	GrantCronRead    = "cron:read"
	GrantCronCreate  = "cron:create"
	GrantCronUpdate  = "cron:update"
	GrantCronDelete  = "cron:delete"
	GrantCronExecute = "cron:execute" // running a job now

	// GrantHeartbeatRead reads the heartbeat's run history and state (heartbeat/runs).
	GrantHeartbeatRead = "heartbeat:read"

	GrantDevicesRead   = "devices:read"
	GrantDevicesDelete = "devices:delete"

	GrantSkillsRead       = "skills:read"
	GrantSkillsWrite      = "skills:write"
	GrantPersonalityRead  = "personality:read"
	GrantPersonalityWrite = "personality:write"

	// GrantSopsRead reads SOP runs (sops/runs, run-overlay, run-get, pending, the live feed); GrantSopsExecute
	// starts and cancels runs; GrantSopsApprove clears or denies a run's gate (sops/decide, approve, deny).
	GrantSopsRead    = "sops:read"
	GrantSopsExecute = "sops:execute"
	GrantSopsApprove = "sops:approve"
	// GrantSopsWrite authors SOP definitions: sops/save, sops/create, sops/delete and the gateway's POST, PUT
	// and DELETE /api/sops routes (reading them is GrantSopsRead).
	GrantSopsWrite = "sops:write"

	GrantCostRead  = "cost:read"
	GrantLogsRead  = "logs:read"
	GrantDoctorRun = "doctor:run"
	// GrantLocalesFetch lets a caller make the daemon download catalogues (locales/fetch goes out to the
	// network); the registry itself (locales/list) is GrantStatusRead.
	GrantLocalesFetch = "locales:fetch"
)
