package api

import "encoding/json"

// Session methods beyond the turn loop (upstream's session/configure and session/git_branch).
const (
	MethodSessionConfigure = "session/configure"
	MethodSessionGitBranch = "session/git_branch"
)

// SessionOverrides are a live session's own model settings, applied from its next turn on. ModelProvider is a
// configured "<family>.<alias>"; Model replaces that entry's model; Temperature its temperature.
type SessionOverrides struct {
	Model         *string  `json:"model,omitempty"`
	ModelProvider *string  `json:"model_provider,omitempty"`
	Temperature   *float64 `json:"temperature,omitempty"`
}

// SessionConfigureParams are the params of session/configure. Overrides is a SessionOverrides object, decoded
// by the handler like params (so a wrong field type is named); the overrides given are merged into the
// session's current ones (switching model_provider without a model clears the model override).
type SessionConfigureParams struct {
	SessionID string          `json:"session_id"`
	Overrides json.RawMessage `json:"overrides,omitempty"`
}

// SessionConfigureResult is the result of session/configure: the session's overrides after the merge.
type SessionConfigureResult struct {
	SessionID string           `json:"session_id"`
	Overrides SessionOverrides `json:"overrides"`
}

// SessionGitBranchResult is the result of session/git_branch: the branch checked out in the session's
// workspace (or the repository containing it) and the short hash of HEAD; both absent outside a repository.
type SessionGitBranchResult struct {
	SessionID string `json:"session_id"`
	Branch    string `json:"branch,omitempty"`
	Hash      string `json:"hash,omitempty"`
}
