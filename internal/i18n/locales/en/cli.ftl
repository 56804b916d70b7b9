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
cli-storage-about = rewrite the SQLite stores without their free pages (zeroclaw storage compact; the daemon stopped)
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
