package quickstart

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/i18n"
)

// Builder applies submissions to one config through its Manager; the RPC methods and the CLI share it.
type Builder struct {
	Config *config.Manager
	// WriteFile writes an identity file into an agent's workspace after the config naming the agent is saved
	// (nil: submissions that stage files are refused).
	WriteFile func(agent, filename, content string) error
	Log       *slog.Logger
	// Locale words the submission's problems (nil: English, what the quickstart/* methods answer).
	Locale *i18n.Localizer
}

// planError carries a submission's problems out of a config.PlanFunc.
type planError struct{ errs []api.QuickstartError }

func (e *planError) Error() string { return fmt.Sprintf("quickstart: %d problem(s)", len(e.errs)) }

// planFunc is Build as a config.PlanFunc; plan receives the Plan that was written.
func (b *Builder) planFunc(sub *api.BuilderSubmission, out *Plan) config.PlanFunc {
	return func(cfg *config.Config) ([]config.SetEntry, error) {
		*out = BuildIn(b.Locale, cfg, sub)
		if len(out.Errors) > 0 {
			return nil, &planError{out.Errors}
		}
		if len(out.Files) > 0 && b.WriteFile == nil {
			return nil, &planError{[]api.QuickstartError{{Step: api.QuickstartStepAgent, Field: "personality_files",
				Message: b.Locale.T("cli-qs-files-not-here")}}}
		}
		return out.Sets, nil
	}
}

// Preview is the submission's plan and the config file before and after it, nothing written. A submission's
// problems come back in Plan.Errors with a zero Preview; err is what kept the preview from being made (an
// authorization refusal, an unreadable file).
func (b *Builder) Preview(ctx context.Context, sub *api.BuilderSubmission) (Plan, config.Preview, error) {
	var plan Plan
	pv, err := b.Config.Preview(ctx, b.planFunc(sub, &plan))
	if errs, ok := problems(err); ok {
		return Plan{Errors: errs}, config.Preview{}, nil
	}
	return plan, pv, err
}

// Validate is quickstart/validate: the submission checked against the config in force and its candidate file
// validated as a whole; nothing is written.
func (b *Builder) Validate(ctx context.Context, sub *api.BuilderSubmission) (api.QuickstartResult, error) {
	plan, _, err := b.Preview(ctx, sub)
	if err != nil {
		return api.QuickstartResult{}, err
	}
	if len(plan.Errors) > 0 {
		return api.QuickstartResult{Kind: api.QuickstartKindErrors, Errors: plan.Errors}, nil
	}
	return api.QuickstartResult{Kind: api.QuickstartKindOK}, nil
}

// Apply is quickstart/apply: the submission planned under the config write lock and written as one atomic,
// validated save (the previous file kept as .bak); when it fails nothing is written. expect, when not nil, is
// the file a Preview showed: a file changed since is refused (config.ErrDrifted). authorize is the caller's
// config write check. A submission's problems, and a save that fails, come back as kind "errors"; an
// authorization refusal or a drifted file is err.
func (b *Builder) Apply(ctx context.Context, sub *api.BuilderSubmission, expect []byte, authorize func([]string) error) (api.QuickstartResult, error) {
	var plan Plan
	refused := false
	check := func(props []string) error {
		if authorize == nil {
			return nil
		}
		err := authorize(props)
		refused = err != nil
		return err
	}
	_, err := b.Config.SetPlanned(ctx, b.planFunc(sub, &plan), expect, check)
	if refused || errors.Is(err, config.ErrDrifted) || (err != nil && ctx.Err() != nil) {
		return api.QuickstartResult{}, err
	}
	if errs, ok := problems(err); ok {
		return api.QuickstartResult{Kind: api.QuickstartKindErrors, Errors: errs}, nil
	}
	if err != nil {
		return api.QuickstartResult{Kind: api.QuickstartKindErrors, Errors: []api.QuickstartError{{Step: api.QuickstartStepAgent,
			Message: b.Locale.T("cli-qs-persist-failed", "error", err.Error())}}}, nil
	}
	var errs []api.QuickstartError
	for i, f := range plan.Files {
		if err := b.WriteFile(plan.Agent.Alias, f.Filename, f.Content); err != nil {
			errs = append(errs, api.QuickstartError{Step: api.QuickstartStepAgent, Field: fmt.Sprintf("personality_files[%d]", i),
				Message: b.Locale.T("cli-qs-file-write-failed", "error", err.Error())})
		}
	}
	if len(errs) > 0 {
		return api.QuickstartResult{Kind: api.QuickstartKindErrors, Errors: errs}, nil
	}
	agent := plan.Agent
	restarted := false // the live config is swapped in place: nothing restarts
	return api.QuickstartResult{Kind: api.QuickstartKindApplied, Agent: &agent, DaemonRestarted: &restarted}, nil
}

// problems unwraps a submission's problems from a Manager error.
func problems(err error) ([]api.QuickstartError, bool) {
	var pe *planError
	if errors.As(err, &pe) {
		return pe.errs, true
	}
	var ve *config.ValidationError
	if errors.As(err, &ve) {
		out := []api.QuickstartError{}
		for _, p := range ve.Problems {
			out = append(out, api.QuickstartError{Step: stepOf(p.Path), Field: p.Path, Message: p.Message})
		}
		return out, true
	}
	var ee *config.EntryError
	if errors.As(err, &ee) && !errors.Is(err, config.ErrDrifted) {
		return []api.QuickstartError{{Step: stepOf(ee.Prop), Field: ee.Prop, Message: ee.Error()}}, true
	}
	return nil, false
}

func stepOf(prop string) string {
	switch {
	case hasPrefix(prop, "providers."):
		return api.QuickstartStepModelProvider
	case hasPrefix(prop, "risk_profiles."):
		return api.QuickstartStepRiskProfile
	case hasPrefix(prop, "memory.") || hasPrefix(prop, "storage."):
		return api.QuickstartStepMemory
	}
	return api.QuickstartStepAgent
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

// Dismiss is quickstart/dismiss: a run left unfinished is only logged, as upstream does.
func Dismiss(log *slog.Logger, runID, surface string, lastStep *string) error {
	switch surface {
	case api.QuickstartSurfaceWeb, api.QuickstartSurfaceTUI, api.QuickstartSurfaceCLI, api.QuickstartSurfaceTest:
	default:
		return fmt.Errorf("%w: unknown surface %q (web, tui, cli or test)", ErrInvalid, visible(surface))
	}
	step := "none"
	if lastStep != nil {
		step = *lastStep
	}
	if log != nil {
		log.Info("quickstart dismissed", "component", "quickstart", "quickstart.run_id", visible(runID),
			"quickstart.surface", surface, "last_step", visible(step), "dismissed", true)
	}
	return nil
}
