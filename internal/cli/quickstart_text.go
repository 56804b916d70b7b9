package cli

// The user-facing strings of `zeroclaw quickstart`, kept in one place so they can move to the message
// catalogue as they are.
const (
	qsSynopsis = `[flags]

Sets up a working agent in five questions: the model provider (openai for OpenAI or any OpenAI-compatible
server by its --uri, ollama, anthropic, or the offline echo), its model, the agent's name, the risk preset
(strict, balanced or open) and whether to pair a device and install the service. Every answer has a flag;
questions without one are asked on the terminal, or read line by line from a pipe. The provider is tested
with one real request before anything is written. An existing config.toml is edited in place (comments and
everything else kept, the previous file saved as config.toml.bak), and the change is shown and confirmed
first; --dry-run only shows it.`

	qsAskProvider       = "Model provider (openai, ollama, anthropic, echo)"
	qsAskURI            = "Base URL of the API (a local OpenAI-compatible server works too)"
	qsAskModel          = "Model"
	qsAskKeyEnv         = "Environment variable holding the API key"
	qsAskAgent          = "Agent name"
	qsAskPreset         = "Risk preset: strict (asks before every risky call), balanced (uses its workspace tools, asks for the rest), open (no questions)"
	qsAskPair           = "Pair a device (phone, browser) with the gateway after setup?"
	qsAskService        = "Install the daemon as a user service?"
	qsAskConfirm        = "Write these changes to %s?"
	qsTesting           = "Testing %s with one request..."
	qsTestOK            = "The provider answered: %s"
	qsNoChange          = "Nothing to change."
	qsDryRun            = "(dry run: nothing was written)"
	qsCancelled         = "Quickstart cancelled. No config written."
	qsNothingDone       = "nothing on disk was changed"
	qsWritten           = "Quickstart complete: agent %q uses %s with the %s risk profile (%s; the previous file is %s)."
	qsNextSteps         = "Next: zeroclaw agent --agent %s -m \"hello\""
	qsPairLater         = "To pair a device, start the daemon (zeroclaw daemon) and run: zeroclaw pair code"
	qsViaDaemon         = "(a daemon is running: the change was applied through it)"
	qsProviderFail      = "the provider test failed: %v"
	qsOnboardDeprecated = "zeroclaw onboard is deprecated and does nothing: run zeroclaw quickstart (it edits an existing config in place, after showing the change)."
	qsNoKey             = "%s is not set: export your API key in it, or name another variable with --api-key-env"
)
