# English: the source catalogue. Every key here exists in fr/cli.ftl (TestCatalogComplete); es, ja and
# zh-CN may hold fewer and fall back to these key by key. Keys follow upstream's families (cli-*, doctor-*,
# chat-*). Commands, paths and property names inside a message stay as they are in every language.

## zeroclaw doctor: findings (what was seen) and fixes (what to do)
doctor-key-symlink = {$path} is a symbolic link: the key is refused
doctor-key-symlink-fix = replace the link with the key file itself: cp --remove-destination "$(readlink -f {$path})" {$path}
doctor-dir-mode = {$path} has mode {$mode}: other users can list it
doctor-file-mode = {$path} has mode {$mode}: other users can read it
doctor-modes-ok = the config, the key and the data files are private
doctor-db-fix = stop the daemon (zeroclaw stop), then restore the file from a backup (zeroclaw restore FILE.tar.gz), or salvage what is readable: sqlite3 {$path} .recover | sqlite3 {$path}.recovered and move it into place
doctor-db-empty = {$path}: empty (an SQLite database nothing was written to yet)
doctor-db-not-sqlite = {$path} is not an SQLite database (its header is wrong)
doctor-db-unreadable = {$path} cannot be checked: {$error}
doctor-db-corrupt = {$path} is corrupt: {$problems}
doctor-db-ok = {$path}: integrity ok
doctor-receipts-unreadable = the JSONL import receipts cannot be read: {$error}
doctor-receipts-unreadable-fix = see the database finding for {$path}
doctor-next-start = start the daemon: zeroclaw daemon
doctor-next-restart = restart the daemon (zeroclaw stop, then zeroclaw daemon): imports run at start
doctor-archive-unreadable = {$path} cannot be read: {$error}
doctor-archive-mismatch = {$path} differs from its import receipt ({$size} bytes, sha256 {$sum}; receipt: {$receipt_size} bytes, {$receipt_sum}): the daemon refuses it
doctor-archive-mismatch-fix = the messages are already in sessions.db: move {$path} out of {$dir} (keep it if it holds anything else)
doctor-archive-missing = {$name} was imported (session {$session}) but its archive {$path} is gone
doctor-archive-missing-fix = nothing is lost: the messages are in sessions.db; put the original file back as {$path} if you still have it
doctor-importing-ambiguous = both {$name} and {$staged} exist: the import cannot tell which is current
doctor-importing-ambiguous-fix = compare the two files, keep the right one as {$name} and move the other out of {$dir}
doctor-importing-mismatch = {$path} differs from the receipt already committed for it
doctor-importing-mismatch-fix = the receipt's messages are in sessions.db: move {$path} out of {$dir}
doctor-importing-handoff = {$path} was imported but its hand-off to {$name}.migrated was interrupted
doctor-importing-handoff-fix = {$next}: it finishes the hand-off without duplicating messages
doctor-importing-orphan = {$path} is left from an interrupted import
doctor-importing-orphan-fix = {$next}: it imports the file
doctor-receipts-ok = { $count ->
    [one] {$count} imported JSONL session matches its archive
   *[other] {$count} imported JSONL sessions match their archives
}
doctor-config-missing = there is no {$path}
doctor-config-missing-fix = start the daemon once (zeroclaw daemon): it writes a default config with the offline echo provider
doctor-config-unreadable = {$path} cannot be read: {$error}
doctor-config-invalid-fix = fix the place named above in {$path}, then check with: zeroclaw config validate
doctor-config-entry-disabled = {$problem}: the entry is disabled at start
doctor-config-entry-disabled-fix = edit {$file} (or zeroclaw config set/delete {$property}), then: zeroclaw config validate
doctor-config-warning-fix = edit {$path} as the warning says; zeroclaw config validate lists what remains
doctor-config-ok = {$path} loads without problems
doctor-key-missing = { $count ->
    [one] {$count} encrypted value ({$fields}) but {$path} does not exist: it cannot be read
   *[other] {$count} encrypted values ({$fields}) but {$path} does not exist: they cannot be read
}
doctor-key-missing-fix = restore the .secret_key that encrypted them from a backup (zeroclaw restore), or set each value again: zeroclaw config set {$field} VALUE
doctor-key-invalid-fix = restore {$path} from a backup: 64 hex characters, a regular file, mode 0600
doctor-key-wrong = {$path} cannot decrypt {$fields}: the key is not the one they were encrypted with, or the values are damaged
doctor-key-wrong-fix = restore the matching .secret_key from a backup, or set each value again: zeroclaw config set {$field} VALUE
doctor-secrets-ok = { $count ->
    [one] {$count} encrypted value opens with {$path}
   *[other] {$count} encrypted values open with {$path}
}
doctor-lock-unreadable = cannot tell whether a daemon runs: {$error}
doctor-lock-unreadable-fix = remove {$path} if it is not a regular file owned by you, then start the daemon again
doctor-daemon-live = a daemon (pid {$pid}) holds {$path}
doctor-lock-stale = no daemon running; {$path} is a harmless leftover of pid {$pid}
doctor-daemon-stopped = no daemon running
doctor-endpoint-foreign = pid {$pid} serves {$path} but no daemon holds this install's lock: it belongs to another install
doctor-endpoint-foreign-fix = point this install at its own socket (unset ZEROCLAW_SOCKET) or stop the other daemon: zeroclaw stop
doctor-socket-missing = a daemon runs but its socket {$path} is gone: clients cannot reach it
doctor-socket-missing-fix = restart the daemon: kill {$pid} (zeroclaw stop cannot reach it), then zeroclaw daemon
doctor-socket-not-socket = {$path} is not a socket: the daemon cannot listen there
doctor-socket-not-socket-fix = move {$path} away, then start the daemon
doctor-socket-foreign-owner = {$path} belongs to uid {$uid}, not to you (uid {$me})
doctor-socket-foreign-owner-fix = do not talk to a socket another user planted: remove it (as that user or root) and start your daemon
doctor-socket-dir-mode = the socket's directory {$path} has mode {$mode}: other users can reach the socket path
doctor-socket-stale = no daemon runs but its socket {$path} is still there (the daemon did not exit cleanly)
doctor-socket-stale-fix = nothing to do: the next zeroclaw daemon removes it; or rm {$path}
doctor-socket-ok = the socket {$path} is yours
doctor-client-closed-after-initialize = {$count} client connection(s) closed right after initialize without another call (last at {$last}); an older zerocode (0.8.2-0.8.4) does this when the daemon's server_version ({$version}) is not its own release
doctor-client-closed-after-initialize-fix = advertise your zerocode's version (see zerocode --version): zeroclaw config set rpc.server_version 0.8.4; set it back to empty for zerocode 0.8.6
doctor-gateway-stale = the gateway serves {$url}, but the config asks for another address: {$error}
doctor-gateway-stale-fix = free that address or set gateway.host/gateway.port back; zeroclaw config set gateway.port PORT rebinds at once
doctor-gateway-served = the gateway serves {$url}
doctor-gateway-disabled = gateway not served: {$reason}
doctor-gateway-not-served = the gateway is configured at {$addr} but not served: {$error}
doctor-gateway-fix-config = fix [gateway] in config.toml, then zeroclaw config reload
doctor-gateway-fix-in-use = another process listens on {$addr} (find it: ss -ltnp 'sport = :{$port}'); stop it, or move this gateway: zeroclaw config set gateway.port {$next} (the daemon rebinds at once)
doctor-gateway-fix-other = fix what the error names, then zeroclaw config reload (or set another address: zeroclaw config set gateway.port {$next})
doctor-mcp-disabled = mcp.enabled = false: none of the {$count} MCP servers is started
doctor-mcp-command-missing = MCP server {$server}: command {$command} not found
doctor-mcp-command-missing-fix = install it, or set an absolute path in {$property}
doctor-mcp-command-on-path = MCP server {$server}: {$command} is on PATH
doctor-mcp-ungranted = MCP server {$server} is granted to no agent (deny by default): its tools reach no one
doctor-mcp-ungranted-fix = add [mcp_bundles.<name>] servers = [{$server}] and list the bundle in agents.<alias>.mcp_bundles
doctor-mcp-ready = { $count ->
    [one] MCP server {$server} is ready with {$count} tool
   *[other] MCP server {$server} is ready with {$count} tools
}
doctor-mcp-backoff = MCP server {$server} is down (restarted {$count} times): {$error}
doctor-mcp-backoff-fix = check the command, its arguments and env in {$property}, or raise startup_timeout_secs for a slow server
doctor-provider-unreachable = {$name} ({$url}) is unreachable: {$error}
doctor-provider-unreachable-fix = check the network and {$property} (zeroclaw config set {$property} URL)
doctor-provider-reachable = {$name} ({$url}) answers (HTTP {$status})
doctor-sop-runs-durable = SOP runs are kept in {$path} ({$count} SOPs loaded)
doctor-sop-runs-in-memory = SOP runs are kept in memory only and are lost at restart: {$error}
doctor-sop-runs-in-memory-fix = fix what the error names (permissions of the run state directory, a damaged runs.db: move it aside), then restart the daemon; or set sop.persist_runs = false to accept memory-only runs
doctor-sop-runs-memory = SOP runs are kept in memory only, as configured ({$count} SOPs loaded)
doctor-sop-disabled = { $count ->
    [one] {$count} SOP failed to load and is disabled
   *[other] {$count} SOPs failed to load and are disabled
}
doctor-sop-disabled-fix = zeroclaw sop validate <sops_dir> names the file and line of each problem

## The command line
cli-error-label = Error: {$error}
cli-try-label = Try: {$hint}
cli-usage-title = zeroclaw: a personal AI agent runtime daemon
cli-usage-line = Usage: zeroclaw <command> [flags]
cli-usage-flags = Run 'zeroclaw <command> -h' for a command's flags.
cli-unknown-command = unknown command {$command}
cli-did-you-mean-command = did you mean {$command}? (zeroclaw help lists the commands)
cli-unknown-subcommand = {$group}: unknown subcommand {$command}
cli-did-you-mean-subcommand = did you mean {$command}?
cli-doctor-via-daemon = the running daemon
cli-doctor-via-process = this process (no daemon running)
cli-doctor-header = zeroclaw doctor: {$root} (checked by {$via})
cli-doctor-fix = fix: {$fix}
cli-doctor-timed-out = timed out during: {$phase}
cli-doctor-summary = {$ok} ok, {$warnings} warnings, {$errors} errors
cli-doctor-found = doctor found {$errors} errors and {$warnings} warnings
cli-doctor-found-hint = apply the fixes above, then run zeroclaw doctor again
cli-daemon-about = run the daemon in the foreground
cli-status-about = print the running daemon's status
cli-agent-about = chat with an agent (one-shot with -m, else interactive); starts an ephemeral daemon if none runs
cli-sessions-about = list, show or delete stored chat sessions
cli-memory-about = list, search, show or forget what the agents remember
cli-skills-about = list, show or edit the agents' skills (bundles and each workspace's own)
cli-personality-about = list, show or edit an agent's identity files (SOUL.md, USER.md, ...)
cli-cron-about = list, add, remove, run or show the runs of scheduled jobs (through the running daemon)
cli-sop-about = run standard operating procedures, list their runs, approve, deny or cancel them (through the running daemon)
cli-pair-about = show the gateway pairing code, list or revoke paired devices (through the running daemon)
cli-acp-about = speak the Agent Client Protocol on stdin/stdout for an editor; starts an ephemeral daemon if none runs
cli-mcp-about = serve the daemon's memory, sessions, cron and SOPs as MCP tools on stdin/stdout (mcp serve); starts an ephemeral daemon if none runs
cli-quickstart-about = set up a working agent in five questions (provider, model, name, risk preset, extras); edits an existing config in place after showing the change
cli-heartbeat-about = show the heartbeat's state and the outcome of every slot (through the running daemon)
cli-onboard-about = deprecated: prints how to run zeroclaw quickstart, and writes nothing
cli-config-about = get, set, list, delete or validate configuration properties
cli-logs-about = print the daemon's runtime events (-f follows new ones)
cli-costs-about = print model spending as a table by day, agent or model
cli-doctor-about = check the install (file modes, databases, secrets, config, providers) and say how to fix what is wrong
cli-backup-about = write a consistent archive of the install (FILE.tar.gz), even while the daemon runs
cli-restore-about = verify an archive, then restore it as the install (--force keeps the old one aside)
cli-storage-about = copy the chat sessions between SQLite and PostgreSQL (migrate --to postgres|sqlite DSN, resumable and verified), or rewrite the SQLite stores without their free pages (compact, the daemon stopped)
cli-rpc-about = send NDJSON requests from stdin to the daemon and print every reply (a socat replacement)
cli-stop-about = ask the running daemon to shut down
cli-service-about = install, uninstall, start, stop or show the daemon as a user service (systemd, launchd)
cli-version-about = print the version

## The chat (zeroclaw agent): notices and the approval prompt
chat-session-banner = session {$session} with agent {$agent} ({$count} messages); /exit or Ctrl-D to leave
chat-turn-cancelled = (turn cancelled)
chat-cancelling = cancelling the turn (interrupt again to quit)
chat-history-trimmed = (older messages were trimmed from the model's context)
chat-approval-wants = {$tool} wants to run: {$summary}
chat-approval-prompt = Allow? [y]es / [n]o / [a]lways:
# The words that answer the prompt, comma-separated (y, yes, a and always are always understood).
chat-approval-yes = y,yes
chat-approval-always = a,always
chat-approval-eof = (no answer on stdin: rejected)
chat-elicit-several = (several: numbers separated by commas)
chat-elicit-prompt = Answer:
chat-elicit-eof = (no answer on stdin: declined)
cli-completion-about = print the shell completion script (bash, zsh or fish): source <(zeroclaw completion bash)
cli-ps-about = list the turns running in the daemon: session, agent, model and elapsed time
cli-ps-none = no turn is running
cli-models-about = list the models a configured provider offers (OpenAI-compatible /models, Ollama /api/tags)
cli-ps-model-override = {$model} (this session)

## zeroclaw quickstart and onboard: questions, progress and errors
cli-quickstart-synopsis = [flags]

    Sets up a working agent in five questions: the model provider (openai for OpenAI or any OpenAI-compatible
    server by its --uri, ollama, anthropic, or the offline echo), its model, the agent's name, the risk preset
    (strict, balanced or open) and whether to pair a device and install the service. Every answer has a flag;
    questions without one are asked on the terminal, or read line by line from a pipe. The provider is tested
    with one real request before anything is written. An existing config.toml is edited in place (comments and
    everything else kept, the previous file saved as config.toml.bak), and the change is shown and confirmed
    first; --dry-run only shows it.
cli-quickstart-ask-provider = Model provider (openai, ollama, anthropic, echo)
cli-quickstart-ask-uri = Base URL of the API (a local OpenAI-compatible server works too)
cli-quickstart-ask-model = Model
cli-quickstart-ask-key-env = Environment variable holding the API key
cli-quickstart-ask-agent = Agent name
cli-quickstart-ask-preset = Risk preset: strict (asks before every risky call), balanced (uses its workspace tools, asks for the rest), open (no questions)
cli-quickstart-ask-pair = Pair a device (phone, browser) with the gateway after setup?
cli-quickstart-ask-service = Install the daemon as a user service?
cli-quickstart-ask-confirm = Write these changes to {$path}?
# How a yes/no question shows its default, and the words that answer yes (y and yes are always understood).
cli-quickstart-default-no = y/N
cli-quickstart-default-yes = Y/n
cli-quickstart-yes-words = y,yes
cli-quickstart-testing = Testing {$provider} with one request...
cli-quickstart-test-ok = The provider answered: {$answer}
cli-quickstart-answer-too-large = the provider's answer is larger than the quickstart test accepts (1 MiB)
cli-quickstart-no-change = Nothing to change.
cli-quickstart-diff-after = {$path} (after quickstart)
cli-quickstart-dry-run = (dry run: nothing was written)
cli-quickstart-cancelled = Quickstart cancelled. No config written.
cli-quickstart-written = Quickstart complete: agent {$agent} uses {$provider} with the {$risk} risk profile ({$path}; the previous file is {$backup}).
cli-quickstart-next-steps = Next: {$command}
cli-quickstart-pair-later = To pair a device, start the daemon (zeroclaw daemon) and run: zeroclaw pair code
cli-quickstart-via-daemon = (a daemon is running: the change was applied through it)
cli-quickstart-provider-failed = the provider test failed: {$error}; nothing on disk was changed
cli-quickstart-provider-failed-hint = check --uri, --model and the API key, or run again with --no-test
cli-quickstart-no-key = {$variable} is not set: export your API key in it, or name another variable with --api-key-env
cli-quickstart-unexpected-argument = quickstart: unexpected argument {$argument}
cli-quickstart-unknown-provider = quickstart: unknown provider {$provider}
cli-quickstart-unknown-provider-hint = --provider openai, ollama, anthropic or echo
cli-quickstart-bad-agent-name = quickstart: agent name {$name} is not allowed: use lowercase letters, digits and single underscores, starting and ending with a letter or digit
cli-quickstart-bad-agent-name-again = {$message} (e.g. {$example})
cli-quickstart-unknown-preset = quickstart: unknown preset {$preset}
cli-quickstart-unknown-preset-hint = --preset strict, balanced or open
cli-quickstart-daemon-silent = quickstart: a daemon (pid {$pid}) holds {$root} but did not answer at its endpoint
cli-quickstart-daemon-silent-hint = zeroclaw status, then try again
cli-quickstart-apply-failed = quickstart: {$error}; nothing on disk was changed
cli-quickstart-cannot-apply = quickstart: the answers cannot be applied; nothing on disk was changed
cli-onboard-deprecated = zeroclaw onboard is deprecated and does nothing: run zeroclaw quickstart (it edits an existing config in place, after showing the change).
cli-onboard-unsupported = onboard: {$argument} is no longer supported: onboarding is zeroclaw quickstart

## Errors and hints of the other commands
cli-acp-not-served = the daemon serving {$endpoint} does not serve ACP at {$target}
cli-acp-not-served-hint = look at the daemon's log for why, then zeroclaw stop and retry
cli-agent-blank-message = agent: -m needs a non-blank message
cli-backup-no-install = no install at {$path}
cli-restore-daemon-running-hint = zeroclaw stop, then restore again
cli-restore-not-empty-hint = {$command} (the current install is kept as {$path})
cli-restore-invalid-hint = nothing was written; use another copy of the backup
cli-unknown-log-level = unknown log level {$level}
cli-unknown-log-format = unknown log format {$format}
cli-completion-unknown-shell = no completion for shell {$shell}
cli-config-not-prop-value = config: set-many: argument {$index} ({$argument}) is not PROP=VALUE
cli-config-reload-no-daemon = config: reload: {$error} at {$endpoint} (the file is read when the daemon starts)
cli-config-validate-missing = config: validate: {$path} does not exist
cli-config-validate-missing-hint = check the path given to --file
cli-config-invalid = config: {$path} is invalid
cli-config-fix-line-hint = fix the line above, then: zeroclaw config validate
cli-config-problems = { $count ->
    [one] config: {$path} is invalid: {$count} problem
   *[other] config: {$path} is invalid: {$count} problems
}
cli-config-fix-lines-hint = fix the lines above, then: zeroclaw config validate
cli-forbidden-hint = ask an admin for the grant, or run the command as the daemon's user
cli-config-fix-at-hint = fix {$file}:{$line} ({$key}), then: zeroclaw config validate
cli-config-refused-write-hint = nothing was written to {$file}; define what {$property} names first (or set both in one zeroclaw config set-many)
cli-config-daemon-silent = config: a daemon (pid {$pid}) holds {$root} but did not answer at its endpoint
cli-config-migrate-problems = { $count ->
    [one] config: {$path} has {$count} problem; a daemon disables that entry
   *[other] config: {$path} has {$count} problems; a daemon disables those entries
}
cli-costs-bad-by = --by {$value}: want day, agent or model
cli-cron-one-schedule = cron add: give exactly one of --cron, --at and --every
cli-cron-one-action = cron add: give exactly one of --command and --prompt
cli-cron-at-not-positive = cron add: --at {$value}: the delay must be positive
cli-cron-at-invalid = cron add: --at {$value}: want an RFC 3339 time or a delay
cli-cron-at-invalid-hint = --at 20m, or --at 2026-07-01T09:00:00+02:00
cli-cron-choose-agent = { $count ->
    [one] {$op}: {$count} agent is enabled ({$agents}): choose one
   *[other] {$op}: {$count} agents are enabled ({$agents}): choose one
}
cli-cron-job-failed = job {$id} failed ({$status})
cli-daemon-unsafe-lock-hint = remove that file if nobody uses it, or put the socket (ZEROCLAW_SOCKET) in a directory only you can write
cli-no-daemon = no daemon is running
cli-no-daemon-at = {$error} at {$endpoint}
cli-editor-hint = set EDITOR to your editor's command, e.g. EDITOR=nano
cli-logs-unknown-severity = unknown severity {$severity}
cli-logs-bad-since = --since {$value} is neither a duration nor an RFC 3339 time
cli-logs-bad-limit = --limit must be at least 1
cli-logs-follow-no-daemon = logs: -f follows a running daemon: {$error}
cli-logs-follow-no-daemon-hint = zeroclaw logs (without -f) reads the saved events; zeroclaw daemon starts one
cli-daemon-closed = the daemon closed the connection
cli-mcp-not-paired = mcp serve: {$variable} is not a paired token: {$error}
cli-mcp-not-paired-hint = zeroclaw pair code --profile NAME makes a code; pair a device with it (POST /pair) and set its token, or unset {$variable}
cli-mcp-session-ended = mcp serve: the session ended (frames are limited to {$limit} bytes): {$error}
cli-models-failed = no model list from {$providers}
cli-logs-not-persisted = logs: log persistence is off (observability.log_persistence = "none"): nothing was kept
cli-costs-bad-time = costs: {$flag} {$value} is not an RFC 3339 time
cli-pair-unknown-profile-hint = pick a defined profile, or define one first: [permission_profiles.NAME] grants = ["sessions:execute"] in config.toml, then zeroclaw config reload
cli-personality-missing = personality: agent {$agent} has no {$file} yet
cli-rpc-unanswered = { $count ->
    [one] {$count} request still unanswered after {$wait}
   *[other] {$count} requests still unanswered after {$wait}
}
cli-service-unsupported-hint = run `zeroclaw daemon` from your own startup script
cli-sessions-none = sessions: no session {$session}
cli-sessions-none-hint = zeroclaw sessions list (an id or a unique prefix of one)
cli-sessions-ambiguous = sessions: {$prefix} is the prefix of {$count} sessions: {$sessions}
cli-sessions-ambiguous-more = sessions: {$prefix} is the prefix of {$count} sessions: {$sessions} and {$more} more
cli-sessions-ambiguous-hint = give more of the id
cli-skills-none = skills: no skill {$skill}
cli-skills-ambiguous = skills: {$count} skills are named {$skill}
cli-skills-ambiguous-hint = choose one: {$choices}
cli-skills-edit-hint = {$command} (the edit was not saved)
cli-unexpected-argument = {$command}: unexpected argument {$argument}
cli-sop-validate-one-dir = sop validate: one directory at most, got {$count}
cli-sop-validate-missing = sop validate: {$path} does not exist
cli-sop-validate-dir-hint = zeroclaw sop validate DIR (a SOP folder with SOP.toml, or a folder of them)
cli-sop-validate-empty = sop validate: no SOP in {$path} (no <name>/SOP.toml)
cli-sop-validate-errors = sop validate: {$errors} error(s), {$warnings} warning(s) in {$count} SOP(s)
cli-sop-validate-errors-hint = fix the lines above; a SOP with an error is not loaded (the others are)
cli-sop-bad-payload = sop run: --payload is not valid JSON
cli-spawn-failed = cannot start an ephemeral daemon: {$error}
cli-spawn-failed-exe = cannot start an ephemeral daemon ({$program}): {$error}
cli-spawn-hint = zeroclaw daemon (in another terminal), then retry
cli-spawn-log-hint = look at {$path}, or run zeroclaw daemon in another terminal
cli-spawn-wait-cancelled = waiting for the ephemeral daemon: {$error}
cli-spawn-exited = the ephemeral daemon exited before serving {$target}: {$error}
cli-spawn-timeout = the ephemeral daemon did not serve {$target} within {$wait}
cli-spawn-lock-held = a daemon (pid {$pid}) holds {$lock} but does not serve {$target}
cli-spawn-lock-held-hint = zeroclaw stop, or wait for it to finish starting
cli-stop-timeout = daemon (pid {$pid}) did not exit within {$wait}
cli-internal-error-hint = zeroclaw logs --severity error (the daemon logged the cause)
cli-config-default-invalid = config: the built-in default is invalid: {$error}
cli-config-set-unconfirmed = config/set: the daemon did not confirm the change to {$property}
cli-config-set-many-unconfirmed = config/set-many: the daemon did not confirm the change
cli-service-no-exe = service: the path of this program: {$error}
cli-cron-job-hint = zeroclaw cron list (a job is named by its id or its name)
cli-cron-add-hint = zeroclaw cron add --cron "0 9 * * 1-5" --command "make test" (or --every 1h, --at 20m)
cli-memory-key-hint = zeroclaw memory list (or memory search TEXT) shows the keys
cli-personality-file-hint = zeroclaw personality list (the editable files), --agent NAME
cli-sop-run-hint = zeroclaw sop runs (a run is named by its run id), or zeroclaw sop list
cli-sop-gate-hint = approval_mode or the step's approval policy does not let you clear this gate ([sop] approval_mode, [sop.approval.policies])
cli-sop-internal-hint = set [sop] sops_dir in config.toml and restart the daemon (zeroclaw logs --severity error says more)
cli-sop-manual-hint = zeroclaw sop list (the SOP needs a [[triggers]] type = "manual")
cli-sop-pending-hint = zeroclaw sop pending (the runs waiting for a decision)

## The chat (zeroclaw agent): errors and reconnection
chat-no-agent-enabled = agent: no agent is enabled
chat-agents-enabled = agent: {$count} agents are enabled: {$agents}
chat-agents-enabled-hint = choose one with -a, e.g. {$command}
chat-daemon-unreachable = agent: the daemon went away and cannot be reached again
chat-resume-failed = agent: reconnected but could not resume session {$session}
chat-reconnecting = the daemon went away; reconnecting...
chat-reconnected = { $count ->
    [one] reconnected: session {$session} resumed ({$count} message)
   *[other] reconnected: session {$session} resumed ({$count} messages)
}
chat-interrupt-again = (Ctrl-C again or Ctrl-D to quit)

## zeroclaw quickstart: the planner's problems with a submission (quickstart/* answer them in English)
cli-qs-agent-name-required = agent name is required
cli-qs-agent-name-invalid = agent name {$name} is not allowed: use lowercase letters, digits and single underscores, starting and ending with a letter or digit, at most {$max} characters (e.g. my_agent)
cli-qs-agent-exists = agent `{$name}` already exists
cli-qs-bad-mode = mode must be "existing" or "fresh", got {$mode}
cli-qs-no-profile = no `{$ref}` profile configured
cli-qs-unknown-runtime = unknown runtime preset `{$name}`
cli-qs-bad-reference = `{$ref}` is not a `<type>.<alias>` reference
cli-qs-no-provider = no `providers.models.{$family}.{$alias}` configured
cli-qs-provider-required = provider type, alias, and model are required
cli-qs-unknown-provider-type = unknown model provider type `{$type}` — pick one from the provider list
cli-qs-alias-invalid = alias {$alias} is not allowed: use lowercase letters, digits and single underscores (e.g. {$example})
cli-qs-alias-exists = alias `{$ref}` already exists
cli-qs-provider-field = model provider field `{$field}` is not available in Quickstart
cli-qs-auth-mode = auth mode `{$mode}` is not available: use api_key
cli-qs-model-control = the model name must not contain control characters
cli-qs-unknown-risk = unknown risk preset `{$name}`
cli-qs-no-storage = no `storage.{$ref}` configured
cli-qs-memory-backend = memory.backend is {$backend}: an agent's postgres memory uses that connection; set memory.backend = {$ref} first
cli-qs-postgres-needs-connection = postgres memory needs a connection: add [storage.postgres.<alias>] db_url, then choose it as an existing storage
cli-qs-memory-unsupported = memory kind `{$kind}` is not supported by this daemon (sqlite, markdown, postgres or none)
cli-qs-unknown-memory = unknown memory kind `{$kind}`
cli-qs-no-channel = no channel `{$ref}` configured
cli-qs-channel-bound = channel `{$ref}` is already bound to agent `{$agent}`
cli-qs-channel-required = channel type and alias are required
cli-qs-channel-type = channel type `{$type}` is not available in Quickstart
cli-qs-channel-field = channel field `{$field}` is not available in Quickstart
cli-qs-telegram-token = a Telegram bot token (from @BotFather) looks like 123456789:AA… (digits, a colon, then letters, digits, - and _)
cli-qs-peer-name-required = peer-group name is required
cli-qs-peer-channel-required = peer-group channel is required
cli-qs-peer-name-invalid = peer-group name {$name} is not allowed: use lowercase letters, digits and single underscores (e.g. telegram_main_default)
cli-qs-peer-unknown-channel = peer-group `{$group}` references unknown channel `{$channel}`
cli-qs-peer-exists = peer-group `{$group}` already exists
cli-qs-not-identity-file = `{$file}` is not an identity file ({$files})
cli-qs-content-too-long = content exceeds {$limit} char limit
cli-qs-files-not-here = identity files cannot be written from here
cli-qs-persist-failed = failed to persist config: {$error}
cli-qs-file-write-failed = the config was saved, but the identity file could not be written: {$error}
cli-qs-existing-not-string = an existing choice's value is the alias, a string
cli-qs-fresh-no-value = a fresh choice needs a value
cli-qs-fresh-bad-shape = the fresh value does not have the expected shape

## Messages of the other commands (what they did, an empty list)
cli-backup-done = { $count ->
    [one] backed up {$count} file ({$size}) of {$root} to {$archive}
   *[other] backed up {$count} files ({$size}) of {$root} to {$archive}
}
cli-backup-not-included = not included: {$path}
cli-backup-secret-key = the archive holds .secret_key, which decrypts every secret in config.toml: keep {$archive} as private as the install
cli-restore-moved-aside = the previous install is kept at {$path}
cli-restore-next = next: zeroclaw daemon, then zeroclaw doctor
cli-config-no-properties = no properties under {$prefix}
cli-config-nothing-to-delete = {$property} is not set in the file (nothing to delete)
cli-config-validate-not-yet = {$path} does not exist yet: the first start of the daemon writes the default config, which is valid
cli-migrate-missing = {$path} does not exist: nothing to migrate (the first start writes a schema v3 config)
cli-migrate-already-v3 = {$path} is already schema v3: nothing to migrate
cli-migrate-done = migrated {$path} from schema v{$from} to v3; the previous file is kept as {$backup}
cli-migrate-not-reloaded = the running daemon did not reload it ({$error}); it keeps the same values, migrated in memory, until it does
cli-migrate-reloaded = the running daemon reloaded it (generation {$generation})
cli-cron-no-jobs = no scheduled jobs
cli-no-runs = no runs
cli-memory-none = no memories
cli-pair-code-owner = the device paired with it is the owner's equal unless gateway.device_permission_profiles restricts devices
cli-pair-code-profile = the device paired with it gets permission profile {$profile} only
cli-pair-code-note = one-time code ({$who}): send it as X-Pairing-Code to POST /pair on the gateway (or {"{"}"code"{"}"} to POST /api/pair)
cli-pair-none = no paired devices
cli-pair-revoked = revoked {$device}: its bearer token no longer works
cli-sessions-empty = no sessions
cli-sessions-older = { $count ->
    [one] ({$count} older message not shown; use --limit {$total} to see them all)
   *[other] ({$count} older messages not shown; use --limit {$total} to see them all)
}
cli-skills-empty = no skills
cli-edit-unchanged = no change: nothing written
cli-skills-wrote = wrote skill {$skill} of bundle {$bundle}
cli-personality-wrote = { $bytes ->
    [one] wrote {$file} of agent {$agent} ({$bytes} byte)
   *[other] wrote {$file} of agent {$agent} ({$bytes} bytes)
}
cli-sop-no-runs = no SOP runs
cli-sop-none-pending = No SOP runs waiting for approval.
cli-sop-none-in = no SOPs in {$path}
cli-sop-none-in-hint = mkdir -p {$path}/hello and write hello/SOP.toml ([sop] name, description; [[triggers]] type = "manual") and hello/SOP.md (## Steps)
cli-logs-missed = (missed events {$from} to {$to}: this client fell behind)
cli-logs-follow-only = (log persistence is off: showing new events only)
chat-repl-banner = { $count ->
    [one] session {$session} with agent {$agent} ({$count} message); /help for commands, Ctrl-D to leave
   *[other] session {$session} with agent {$agent} ({$count} messages); /help for commands, Ctrl-D to leave
}
chat-repl-turn-cancelled = (turn cancelled; Ctrl-C again or Ctrl-D to quit)
chat-connection-lost = the connection to the daemon was lost during the turn: {$error}
chat-answer-lost = (the answer to that message was lost; send it again)
chat-repl-bye = session {$session} with agent {$agent}; resume it later with: {$command}
chat-repl-new-session = new session {$session} with agent {$agent} (the previous one resumes with: {$command})
chat-repl-model = model {$model} for this session from the next turn (provider {$provider})
cli-costs-unpriced = unpriced (recorded at $0, not counted by the budgets): {$models}
cli-costs-price-one = price one with: {$command}  (USD per million tokens)
cli-personality-list-note = agent {$agent}; the system prompt reads at most {$max} characters of each file
cli-personality-truncated = (longer than the system prompt reads: it sees the file cut)
cli-sop-config-warning = warning: {$path}: {$error} (using the default SOPs directory)
cli-sop-progress = {$status}: step {$step} of {$total}
cli-sop-waiting = waiting for a decision: zeroclaw sop approve {$run} (or deny)
cli-offline-note = (no daemon is running: read from the install's files)

## storage migrate
cli-storage-usage = storage migrate: --to postgres|sqlite and one DSN (or - to read it from stdin) are required
cli-storage-stdin = storage migrate: could not read the DSN from stdin: {$err}
cli-storage-daemon-running = storage migrate: a daemon runs on {$path}: {$err}
cli-storage-daemon-running-hint = zeroclaw stop, then migrate again
cli-storage-no-chat-db = storage migrate: no chat database at {$path}
cli-storage-dsn-hint = check the DSN (postgres://user:password@host:port/database) and that the server answers
cli-storage-conflict-hint = nothing was overwritten; migrate into an empty destination, or delete that session there first
cli-storage-failed = storage migrate: {$err} (sessions copied so far are kept; run it again to resume)
cli-storage-done = chat sessions: {$sessions} ({$messages} messages) in {$where}: {$copied} copied now, {$skipped} were already there; counts and SHA-256 digests verified
cli-storage-kept = the SQLite files are kept: {$path}
cli-storage-not-copied = not copied by this command: memory (its PostgreSQL backend is set up in [memory]), cron, SOP runs and the other stores

## storage compact
cli-compact-no-data = storage compact: {$path} has no data dir: nothing to compact
cli-compact-daemon-running = storage compact: a daemon (pid {$pid}) owns {$path}
cli-compact-daemon-running-hint = zeroclaw stop, then zeroclaw storage compact
cli-compact-missing = {$store}: {$path} does not exist: nothing to compact
cli-compact-failed-hint = the store is unchanged; zeroclaw doctor checks it
cli-compact-none = no SQLite store to compact
## usage and flag help (cli-flag-SET-FLAG, or cli-flags-FLAG shared by every command; see newFlagSet)
cli-usage = Usage: {$command}
cli-flag-agent-a = short for --agent
cli-flags-agent = the agent (default: the only enabled agent)
cli-flag-agent-agent = agent alias (default: the only configured agent); -a for short
cli-flag-costs-agent = only this agent's requests
cli-flag-cron-add-agent = agent the job runs as (default: the only enabled agent)
cli-flag-memory-forget-agent = forget only this agent's memory (else the key of every agent)
cli-flag-memory-get-agent = this agent's memory (else any agent's)
cli-flag-memory-list-agent = only this agent's memories (and those it may read)
cli-flag-memory-search-agent = search this agent's memories (and those it may read)
cli-flag-quickstart-agent = name of the new agent
cli-flag-skills-edit-agent = the agent of a workspace skill
cli-flag-skills-list-agent = only this agent's workspace skills (bundles are listed too)
cli-flag-skills-show-agent = the agent of a workspace skill
cli-flag-quickstart-api-key = the API key itself (upstream's flag; it shows in ps: prefer --api-key-env)
cli-flag-quickstart-api-key-env = environment variable holding the API key (default: OPENAI_API_KEY or ANTHROPIC_API_KEY)
cli-flag-cron-add-at = run once: an RFC 3339 time, or a delay from now such as 20m or 2h
cli-flag-skills-edit-bundle = the skill's bundle; with a skill not there yet, where to create it
cli-flag-skills-list-bundle = only this bundle ("workspace": the agents' own skills)
cli-flag-skills-show-bundle = the skill's bundle (default: the only skill of that name)
cli-flag-costs-by = group the table by day, agent or model
cli-flag-logs-category = only events of this category (agent, tool, provider, session, system, ...)
cli-flag-memory-list-category = only this category (core, daily, conversation or a custom name)
cli-flag-cron-add-command = shell command, run in the agent's workspace under its risk profile
cli-flags-config-dir = install root (default: $ZEROCLAW_CONFIG_DIR, else ~/.zeroclaw)
cli-flag-cron-add-cron = cron expression, e.g. "0 9 * * 1-5" (minute hour day month weekday)
cli-flag-config-migrate-dry-run = print the migrated file instead of writing it
cli-flag-quickstart-dry-run = show the change to config.toml and write nothing
cli-flag-daemon-ephemeral = exit 1 s after the last client disconnects
cli-flag-cron-add-every = run every DURATION, e.g. 30m
cli-flag-logs-f = keep printing new events as they happen
cli-flag-config-validate-file = file to validate (default: the install's config.toml)
cli-flag-restore-force = restore over a non-empty install, which is kept as DIR.before-restore-<time>
cli-flag-costs-from = only requests at or after this RFC 3339 time
cli-flag-quickstart-install-service = install the daemon as a user service afterwards
cli-flags-json = print the runs as JSON
cli-flag-costs-json = print the raw cost/query result as JSON
cli-flag-cron-list-json = print the jobs as JSON
cli-flag-doctor-json = print the doctor/run result as JSON
cli-flag-heartbeat-runs-json = print the state and the runs as JSON
cli-flag-logs-json = print each event as its JSON line
cli-flag-memory-get-json = print the entry as JSON
cli-flag-memory-list-json = print the entries as JSON
cli-flag-memory-search-json = print the entries as JSON
cli-flag-models-json = print the config/catalog-models results as JSON
cli-flag-pair-list-json = print the devices as JSON
cli-flag-personality-list-json = print the files as JSON
cli-flag-ps-json = print the running turns as JSON
cli-flag-sessions-list-json = print the sessions as JSON (each with its title)
cli-flag-sessions-show-json = print the messages as JSON, as stored
cli-flag-skills-list-json = print the skills as JSON
cli-flag-skills-show-json = print the skill as JSON
cli-flag-sop-show-json = print the run as JSON
cli-flag-status-json = print the raw status result as JSON
cli-flags-limit = at most this many runs, newest first
cli-flag-logs-limit = how many past events to print (newest ones)
cli-flag-memory-search-limit = at most this many results
cli-flag-sessions-list-limit = at most this many sessions (default: all)
cli-flag-sessions-show-limit = show only the last N messages (default: the daemon's page size)
cli-flag-daemon-log-format = log format on stderr: text or json
cli-flag-daemon-log-level = log level: debug, info, warn or error
cli-flag-agent-m = send this one message, print the answer and exit; --message in full
cli-flag-quickstart-memory = the agent's memory: sqlite, markdown or none
cli-flag-agent-message = the same as -m
cli-flag-quickstart-model = model name
cli-flag-quickstart-model-provider = the same as --provider (upstream's name)
cli-flag-logs-n = short for --limit
cli-flag-cron-add-name = a name for the job
cli-flag-quickstart-no-test = skip the provider's test request
cli-flag-doctor-offline = skip the providers' reachability probes (no network)
cli-flag-quickstart-pair = show a pairing code for a device afterwards (needs a running daemon)
cli-flag-sop-run-payload = the step-1 input, as JSON text (the trigger payload)
cli-flag-quickstart-preset = risk preset: strict, balanced or open
cli-flag-pair-code-profile = permission profile the device paired with this code gets (default: gateway.device_permission_profiles; none: the owner's equal)
cli-flag-cron-add-prompt = prompt of an agent job: each run is a turn in a fresh session
cli-flag-quickstart-provider = model provider: openai (or OpenAI-compatible with --uri), ollama, anthropic or echo
cli-flag-quickstart-provider-alias = alias of the new provider entry (default: the first free of default, quickstart, quickstart_2...)
cli-flag-sessions-list-query = only sessions whose messages match this full-text query
cli-flag-rpc-raw = do not send initialize first
cli-flag-sop-cancel-reason = why (shown as the run's failure reason)
cli-flag-sop-deny-reason = why (recorded in the run's ledger and shown as its failure reason)
cli-flag-storage-migrate-schema = the PostgreSQL schema of the tables (default: the connection's search_path)
cli-flag-agent-session = resume the session with this id (created if it does not exist)
cli-flag-memory-list-session = only memories of this session key
cli-flag-logs-severity = lowest severity shown: trace, debug, info, warn or error
cli-flag-logs-since = only events after this: a duration back from now (10m, 2h) or an RFC 3339 time
cli-flag-sop-runs-sop = only the runs of this SOP
cli-flags-step = only if the run waits at this step (what zeroclaw sop pending showed); 0: whatever gate it waits at
cli-flag-quickstart-test-timeout = seconds the provider's test request may take
cli-flag-stop-timeout = how long to wait for the daemon to exit
cli-flag-costs-to = only requests before this RFC 3339 time
cli-flag-storage-migrate-to = the destination: postgres (copy SQLite into PostgreSQL) or sqlite (copy PostgreSQL back)
cli-flag-cron-add-tz = IANA time zone of --cron, e.g. Europe/Paris (default: the daemon host's)
cli-flags-unit-dir = write the unit here instead of the service manager's directory, and leave the manager alone (default: $ZEROCLAW_SERVICE_DIR)
cli-flag-quickstart-uri = base URL of the provider's API (default: the provider's own)
cli-flag-config-migrate-v = also list what moved where
cli-flag-rpc-wait = after stdin ends, how long to wait for outstanding replies
cli-flag-sop-run-wait = wait until the run finishes, printing each change (a gate waits for an approver)
cli-flag-quickstart-yes = take the default of every question not answered by a flag, and write without asking

## version, status, heartbeat runs, sop show
cli-version-line = zeroclaw {$build} (protocol {$protocol} of zeroclaw {$server}, {$go} {$os}/{$arch})
cli-status-running = zeroclaw daemon {$build} (protocol {$protocol} of zeroclaw {$server}) running
cli-status-pid = pid:
cli-status-uptime = uptime:
cli-status-endpoint = endpoint:
cli-status-config-dir = config dir:
cli-status-config-file = config file:
cli-status-data-dir = data dir:
cli-status-sessions = sessions:
cli-status-gateway = gateway:
cli-status-heartbeat = heartbeat:
cli-status-sop = sop:
cli-status-sessions-active = {$count} active
cli-status-sop-counts = {$loaded} loaded, {$disabled} disabled, {$active} active runs ({$waiting} waiting for approval)
cli-status-sop-line = {$counts}; {$storage}
cli-status-sop-durable = runs kept in {$path}
cli-status-sop-volatile-warning = RUNS IN MEMORY ONLY, LOST AT RESTART: {$warning} (zeroclaw doctor says how to fix it)
cli-status-sop-volatile = runs in memory only (as configured)
cli-status-gateway-served = served at {$url}
cli-status-gateway-served-stuck = served at {$url} (a reload could not move it: {$error})
cli-status-gateway-disabled = disabled ({$reason})
cli-status-gateway-not-served = NOT SERVED at {$addr}: {$error} (zeroclaw doctor says how to fix it)
cli-status-heartbeat-off = off: {$problem}
cli-status-heartbeat-every = every {$minutes} min as {$agent}
cli-status-heartbeat-last = last slot {$status}
cli-status-heartbeat-failures = ({$count} failed in a row)
cli-status-heartbeat-deadman = dead-man alert raised
cli-status-heartbeat-next = next slot {$at}
cli-heartbeat-problem = heartbeat: off (config problem: {$problem})
cli-heartbeat-disabled = heartbeat: off ([heartbeat] enabled = false)
cli-heartbeat-on = heartbeat: agent {$agent} every {$minutes} min, next slot {$next}
cli-heartbeat-deadman = dead-man alert raised at {$at}
cli-sop-started = started run {$run}
cli-sop-show-run = run:
cli-sop-show-sop = sop:
cli-sop-show-status = status:
cli-sop-show-trigger = trigger:
cli-sop-show-by = by:
cli-sop-show-rev = sop rev:
cli-sop-show-running = running:
cli-sop-show-pending = pending:
cli-sop-show-started = started:
cli-sop-show-ended = ended:
cli-sop-show-reason = reason:
cli-sop-show-gate = gate:
cli-sop-show-status-value = {$status} (step {$step} of {$total})
cli-sop-show-running-value = step {$step}, try {$try}, since {$since}
cli-sop-show-gate-value = {$kind} at step {$step} — zeroclaw sop approve {$run} (or deny)

## config --help
cli-config-help =
    Commands:
      get [PROP]              print a value (a string bare, anything else as JSON), or the whole config
      set PROP VALUE          set one property; VALUE is JSON when it parses as JSON, else a string
      set-many PROP=VALUE...  set several properties in one atomic change (same value rule)
      list [PREFIX]           print "prop = value" for every property under PREFIX
      delete PROP             remove a property from the file (it falls back to its default), or a whole
                              map entry (agents.NAME, cost.prices."MODEL")
      validate [--file F]     check a config file and print every problem; exit 1 when invalid
      migrate [--dry-run]     rewrite an upstream schema v1/v2 config.toml as v3 (keeps config.toml.bak)
      path                    print the config.toml path
      reload                  ask the running daemon to re-read config.toml

    With a daemon running, get/set/set-many/list/delete/reload go through it; without one, the file is edited
    directly under the install lock. Secrets are always shown masked. An upstream schema v1/v2 file is read as
    v3 in memory; writes are refused until "config migrate" rewrites it.

## completion help
cli-completion-after-compinit = (after compinit)

## other packages' errors the CLI prints (sentinelWords: the sentinel's own English, without its prefix)
cli-err-config-unknown-property = unknown property
cli-err-config-invalid-value = invalid value
cli-err-config-invalid-path = invalid property path
cli-err-config-not-editable = property not editable in place
cli-err-config-no-map-section = no map-keyed section
cli-err-config-invalid-key = invalid key
cli-err-config-old-schema = config.toml uses an older schema
cli-err-config-drifted = config.toml changed on disk
cli-err-backup-invalid-archive = invalid archive
cli-err-backup-daemon-running = a daemon runs on the target install
cli-err-backup-not-empty = the target install is not empty
cli-err-backup-no-room = the archive would not fit

## what a command did
cli-restore-done = restored {$count} files (zeroclaw {$version}, {$created}) into {$path}
cli-config-set-done = set {$prop}
cli-config-deleted = deleted {$prop}
cli-config-reloaded = reloaded (generation {$generation})
cli-config-warning = warning: {$warning}
cli-cron-added = added job {$id} ({$schedule}), next run {$next}
cli-cron-removed = removed job {$id}
cli-memory-forgot = forgot {$key}
cli-sessions-deleted = deleted session {$id}
cli-skills-edited = edited {$path}
cli-sop-disabled = disabled: {$dir}: {$reason}
cli-sop-validate-ok = ok: {$count} SOP(s), {$warnings} warning(s)
cli-stop-done = daemon (pid {$pid}) stopped
cli-costs-summary = today: ${$today}   this month: ${$month}   this daemon run: ${$run}

## memory get
cli-memory-key = key:
cli-memory-category = category:
cli-memory-agent = agent:
cli-memory-created = created:

## status: the shared storage backend
cli-status-storage = storage:
cli-status-storage-line = {$backend}, shared: {$peers} peer(s) seen, {$claims} claim(s) running, {$leases} lease(s) held
cli-status-peer = peer:      {$host} pid {$pid}, version {$version}, seen {$seen}
cli-status-peer-self = peer:      {$host} pid {$pid}, version {$version}, seen {$seen} (this daemon)
cli-flag-storage-compact-store = compact only this store: sessions, acp, cron, memory, sop, control_plane, devices
