package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
)

// Asker puts a question to the session's interactive client. It returns the answer, or an error that wraps
// ErrDeclined, ErrCancelled, ErrNoElicitation or ErrTimeout for those outcomes. It must honour ctx.
type Asker interface {
	Ask(ctx context.Context, question string, choices []string) (answer string, err error)
}

// MultiAsker is an Asker that can also let the user pick several of the choices (ask_user with multi_select).
// An Asker without it is asked the question as a single choice.
type MultiAsker interface {
	Asker
	AskMany(ctx context.Context, question string, choices []string) (answers []string, err error)
}

// Outcomes of an Asker other than an answer. Execute maps each to its own tool result text.
var (
	ErrDeclined      = errors.New("tools: the user declined to answer")
	ErrCancelled     = errors.New("tools: the question was cancelled")
	ErrNoElicitation = errors.New("tools: no interactive client can answer questions")
	ErrTimeout       = errors.New("tools: the question timed out")
)

// Tool result texts for ask_user outcomes; stable so the agent layer and tests can rely on them.
const (
	askNoClientText  = "ask_user: no interactive client is connected that can answer questions; continue without asking, or state the question in your reply."
	askDeclinedText  = "ask_user: the user declined to answer."
	askCancelledText = "ask_user: the question was cancelled before the user answered."
	askTimeoutText   = "ask_user: the user did not answer in time."
)

func askUser(ctx context.Context, env Env, call Call) Result {
	req, err := parseAsk(call)
	if err != nil {
		return errorf("%v", err)
	}
	if env.Asker == nil {
		return Result{Output: askNoClientText, IsError: true}
	}
	var answer string
	if ma, ok := env.Asker.(MultiAsker); ok && req.multi && len(req.choices) > 0 {
		var picked []string
		if picked, err = ma.AskMany(ctx, req.question, req.choices); err == nil {
			if len(picked) == 0 {
				return Result{Output: "The user chose none of the choices."}
			}
			b, _ := json.Marshal(picked)
			answer = "The user chose: " + string(b)
		}
	} else {
		answer, err = env.Asker.Ask(ctx, req.question, req.choices)
	}
	switch {
	case err == nil:
		if strings.TrimSpace(answer) == "" {
			return Result{Output: "The user answered with an empty reply."}
		}
		return Result{Output: answer}
	case errors.Is(err, ErrNoElicitation):
		return Result{Output: askNoClientText, IsError: true}
	case errors.Is(err, ErrDeclined):
		return Result{Output: askDeclinedText, IsError: true}
	case errors.Is(err, ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return Result{Output: askTimeoutText, IsError: true}
	case errors.Is(err, ErrCancelled), errors.Is(err, context.Canceled):
		return Result{Output: askCancelledText, IsError: true}
	}
	return errorf("ask_user: the question could not be asked: %v", err)
}
