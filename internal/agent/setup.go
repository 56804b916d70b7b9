package agent

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/provider"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
)

// Provider, Usage and Message are re-exported so the session layer can name them without importing provider.
type (
	Provider = provider.Provider
	Usage    = provider.Usage
	Message  = provider.Message
)

// EncodedLen and EncodedPrefix measure text as a JSON string on the wire (see provider.EncodedLen); the session
// layer pages stored messages with them.
var (
	EncodedLen    = provider.EncodedLen
	EncodedPrefix = provider.EncodedPrefix
)

// DefaultApprovalTimeout applies when a risk profile sets no approval_timeout_secs.
const DefaultApprovalTimeout = 120 * time.Second

// Sentinels for config lookups; the session layer reports them as invalid params.
var (
	// ErrUnknownAgent reports an agent alias absent from config (or no alias when several agents exist).
	ErrUnknownAgent = errors.New("agent: unknown agent")
	// ErrDisabledAgent reports an agent whose enabled flag is false.
	ErrDisabledAgent = errors.New("agent: agent is disabled")
	// ErrUnknownProvider reports a model_provider reference absent from providers.models.
	ErrUnknownProvider = errors.New("agent: unknown model provider")
	// ErrNoElicitation is what Events.Elicit returns when its client cannot answer questions.
	ErrNoElicitation = errors.New("agent: client cannot answer questions")
)

// Profile is everything a session needs from config to run turns for one agent.
type Profile struct {
	Alias           string
	ProviderRef     string // "<family>.<alias>"
	System          string
	Workspace       string // absolute; not created here
	Policy          tools.Policy
	ApprovalTimeout time.Duration
	Env             map[string]string // agents.<alias>.env: passed to tool processes
	// ContextWindow is the provider's context_window (the model's largest input in tokens); 0: unknown.
	ContextWindow int
	// MaxContextTokens is agents.<alias>.max_context_tokens: the budget past which an ACP session's model context
	// is compacted; 0: never.
	MaxContextTokens int
}

// ChoiceError says why no agent could be picked for a client that named none: zero or several agents are
// enabled. It matches ErrUnknownAgent.
type ChoiceError struct {
	Enabled []string // sorted aliases of the enabled agents
}

func (e *ChoiceError) Error() string {
	if len(e.Enabled) == 0 {
		return "agent: no agent is enabled; enable one (agents.<alias>.enabled = true)"
	}
	return fmt.Sprintf("agent: %d agents are enabled (%s): choose one with agent_alias", len(e.Enabled), strings.Join(e.Enabled, ", "))
}

// WireData lists the enabled agents for a client to offer a choice ({"enabled_agents": [...]}).
func (e *ChoiceError) WireData() any {
	return map[string]any{"enabled_agents": append([]string{}, e.Enabled...)}
}

// Is makes a *ChoiceError match ErrUnknownAgent.
func (e *ChoiceError) Is(target error) bool { return target == ErrUnknownAgent }

// DefaultAgent returns the alias of the only enabled agent, or a *ChoiceError when there are none or several.
func DefaultAgent(cfg *config.Config) (string, error) {
	var enabled []string
	for alias, a := range cfg.Agents {
		if a.IsEnabled() {
			enabled = append(enabled, alias)
		}
	}
	if len(enabled) != 1 {
		slices.Sort(enabled)
		return "", &ChoiceError{Enabled: enabled}
	}
	return enabled[0], nil
}

// Resolve maps agents.<alias> and its risk profile onto a Profile. The workspace defaults to
// <installRoot>/agents/<alias>/workspace. An empty risk_profile means "supervised"; a profile name missing from
// risk_profiles is used as a level (so an unknown name fails closed as readonly in the tool policy).
func Resolve(cfg *config.Config, alias, installRoot string) (Profile, error) {
	a, ok := cfg.Agents[alias]
	if !ok {
		return Profile{}, fmt.Errorf("%w %q", ErrUnknownAgent, alias)
	}
	if !a.IsEnabled() {
		return Profile{}, fmt.Errorf("%w: %q", ErrDisabledAgent, alias)
	}
	ws := a.Workspace.Path
	if ws == "" {
		ws = filepath.Join(installRoot, "agents", alias, "workspace")
	}
	if abs, err := filepath.Abs(ws); err == nil {
		ws = abs
	}
	name := a.RiskProfile
	if name == "" {
		name = config.LevelSupervised
	}
	rp, ok := cfg.RiskProfiles[name]
	if !ok {
		rp = config.RiskProfile{Level: name}
	}
	timeout := time.Duration(rp.ApprovalTimeoutSecs) * time.Second
	if timeout <= 0 {
		timeout = DefaultApprovalTimeout
	}
	var window int
	if family, palias, ok := strings.Cut(a.ModelProvider, "."); ok {
		window = cfg.Providers.Models[family][palias].ContextWindow
	}
	return Profile{
		Alias:            alias,
		ProviderRef:      a.ModelProvider,
		ContextWindow:    window,
		MaxContextTokens: a.MaxContextTokens,
		System:           a.SystemPrompt,
		Workspace:        ws,
		Env:              a.Env,
		Policy: tools.Policy{
			Level:           tools.Level(rp.Level),
			WorkspaceOnly:   rp.WorkspaceOnly,
			AutoApprove:     rp.AutoApprove,
			AlwaysAsk:       rp.AlwaysAsk,
			ExcludedTools:   rp.ExcludedTools,
			AllowedTools:    rp.AllowedTools,
			ForbiddenPaths:  rp.ForbiddenPaths,
			BlockedCommands: rp.BlockedCommands,
			// The install root is out of every tool's reach but the agent's own workspace inside it.
			Protected: tools.Protected{Roots: []string{installRoot}, Except: []string{ws}},
		},
		ApprovalTimeout: timeout,
	}, nil
}

// NewProvider builds the provider that ref ("<family>.<alias>") names in cfg. It performs no I/O.
func NewProvider(cfg *config.Config, ref string) (Provider, error) {
	family, alias, ok := strings.Cut(ref, ".")
	if !ok || family == "" || alias == "" {
		return nil, fmt.Errorf("%w %q (want <family>.<alias>)", ErrUnknownProvider, ref)
	}
	pc, ok := cfg.Providers.Models[family][alias]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownProvider, ref)
	}
	p, err := provider.New(provider.Settings{
		Family:       family,
		Alias:        alias,
		URI:          pc.URI,
		APIKey:       pc.APIKey,
		Model:        pc.Model,
		Temperature:  pc.Temperature,
		TimeoutSecs:  pc.TimeoutSecs,
		MaxTokens:    pc.MaxTokens,
		ExtraHeaders: pc.ExtraHeaders,
	})
	if err != nil {
		return nil, fmt.Errorf("agent: provider %s: %w", ref, err)
	}
	return p, nil
}
