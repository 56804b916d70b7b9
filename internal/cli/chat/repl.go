package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/cli/client"
	"github.com/zeroclaw-go/zeroclaw/internal/cli/hint"
	"github.com/zeroclaw-go/zeroclaw/internal/visible"
)

// repl is the interactive chat on a terminal. Ctrl-C during a turn cancels that turn and returns to the prompt;
// Ctrl-C at the prompt right after another one (or after a cancelled turn), Ctrl-D, /exit or SIGTERM quit.
func (ch *chat) repl(ctx context.Context, res api.SessionNewResult) error {
	base := context.WithoutCancel(ctx) // the first SIGINT ends ctx; here it only cancels a turn
	termCtx, quit := context.WithCancel(base)
	defer quit()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		for {
			select {
			case s := <-sigs:
				if s == syscall.SIGTERM {
					quit()
				}
				ch.interrupt()
			case <-termCtx.Done():
				return
			}
		}
	})
	defer quit() // ends the signal goroutine before wg.Wait

	ch.printErr("%s\n", ch.loc.T("chat-repl-banner", "session", res.SessionID, "agent", res.AgentAlias, "count", res.MessageCount))
	armed := false // the last thing the user did was a Ctrl-C
	for {
		line, err := ch.readMessage(termCtx)
		switch {
		case errors.Is(err, io.EOF):
			ch.printErr("\n")
			return nil
		case errors.Is(err, errPromptInterrupted):
			if armed {
				return nil
			}
			armed = true
			ch.printErr("%s\n", ch.loc.T("chat-interrupt-again"))
			continue
		case termCtx.Err() != nil:
			return &hint.Error{Err: errInterrupted, Code: 130}
		case err != nil:
			return err
		}
		armed = false
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if quitNow, handled, err := ch.local(base, line); handled {
			if err != nil {
				ch.printErr("Error: %v\n", err)
			}
			if quitNow {
				return nil
			}
			continue
		}
		turnCtx, cancel := context.WithCancel(termCtx)
		ch.mu.Lock()
		ch.cancelTurn = cancel
		ch.mu.Unlock()
		outcome, detail, err := ch.send(base, turnCtx, line)
		ch.mu.Lock()
		ch.cancelTurn = nil
		ch.mu.Unlock()
		interrupted := turnCtx.Err() != nil
		cancel()
		if err != nil {
			return err
		}
		switch {
		case termCtx.Err() != nil:
			return &hint.Error{Err: errInterrupted, Code: 130}
		case outcome == api.OutcomeCancelled && interrupted:
			armed = true
			ch.printErr("%s\n", ch.loc.T("chat-repl-turn-cancelled"))
		case outcome == api.OutcomeCancelled:
			ch.printErr("(turn cancelled)\n")
		case outcome == "":
		case outcome != api.OutcomeCompleted:
			ch.printErr("Error: turn %s: %s\n", outcome, visible.Sanitize(detail))
		}
	}
}

// interrupt cancels the running turn, if any.
func (ch *chat) interrupt() {
	ch.mu.Lock()
	cancel := ch.cancelTurn
	ch.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// readMessage reads one message at the chat prompt. A line ending with a backslash continues on the next line,
// and a line starting with """ opens a block that the next line ending with """ closes (the way to paste
// several lines as one message); Ctrl-C inside either drops it. Only one-line messages go into the history,
// which holds one line per entry.
func (ch *chat) readMessage(ctx context.Context) (string, error) {
	line, err := ch.term.prompt(ctx, "> ", false)
	if err != nil {
		return "", err
	}
	var parts []string
	switch {
	case strings.HasPrefix(strings.TrimSpace(line), `"""`):
		first := strings.TrimPrefix(strings.TrimSpace(line), `"""`)
		if rest, ok := strings.CutSuffix(first, `"""`); ok && first != "" {
			return rest, nil
		}
		parts = append(parts, first)
		for {
			next, err := ch.term.prompt(ctx, "... ", false)
			if err != nil {
				return "", err
			}
			if rest, ok := strings.CutSuffix(strings.TrimRight(next, " \t"), `"""`); ok {
				parts = append(parts, rest)
				return strings.Trim(strings.Join(parts, "\n"), "\n"), nil
			}
			parts = append(parts, next)
		}
	case strings.HasSuffix(line, `\`):
		for strings.HasSuffix(line, `\`) {
			parts = append(parts, strings.TrimSuffix(line, `\`))
			if line, err = ch.term.prompt(ctx, "... ", false); err != nil {
				return "", err
			}
		}
		parts = append(parts, line)
		return strings.Join(parts, "\n"), nil
	}
	ch.term.remember(line)
	return line, nil
}

// send runs one turn, reconnecting first when the daemon went away while the chat was idle. When the connection
// is lost during the turn, it reconnects and says that the answer was lost; when it cannot reconnect, the error
// says how to resume. outcome is "" when the turn's end is unknown.
func (ch *chat) send(base, turnCtx context.Context, prompt string) (outcome, detail string, err error) {
	if ch.connLost() {
		if err := ch.reconnect(base); err != nil {
			return "", "", err
		}
	}
	outcome, detail, err = ch.turn(turnCtx, prompt)
	if err == nil || !ch.connLost() || errors.Is(err, errInterrupted) {
		return outcome, detail, err
	}
	ch.printErr("\n%s\n", ch.loc.T("chat-connection-lost", "error", err))
	if err := ch.reconnect(base); err != nil {
		return "", "", err
	}
	ch.printErr("%s\n", ch.loc.T("chat-answer-lost"))
	return "", "", nil
}

func (ch *chat) connLost() bool {
	select {
	case <-ch.c.Done():
		return true
	default:
		return false
	}
}

// reconnect dials the daemon again (starting an ephemeral one as `zeroclaw agent` does when none runs) and
// resumes the chat's session there. Its error names the --session command that resumes later.
func (ch *chat) reconnect(ctx context.Context) error {
	ch.mu.Lock()
	sid := ch.sessionID
	ch.mu.Unlock()
	resume := "zeroclaw agent --session " + sid
	if ch.alias != "" {
		resume = "zeroclaw agent -a " + ch.alias + " --session " + sid
	}
	ch.printErr("%s\n", ch.loc.T("chat-reconnecting"))
	ch.c.Close()
	c, err := ch.redial(ctx)
	if err != nil {
		return hint.With(fmt.Errorf("%s: %w", ch.loc.T("chat-daemon-unreachable"), err), resume)
	}
	var res api.SessionNewResult
	if err := c.Call(ctx, api.MethodSessionNew, api.SessionNewParams{AgentAlias: ch.alias, SessionID: sid}, &res); err != nil {
		c.Close()
		return hint.With(fmt.Errorf("%s: %w", ch.loc.T("chat-resume-failed", "session", sid), err), resume)
	}
	ch.c = c
	ch.printErr("%s\n", ch.loc.T("chat-reconnected", "session", res.SessionID, "count", res.MessageCount))
	return nil
}

// redialWait bounds the retries of redial: as long as the command waits for an ephemeral daemon it spawned.
const redialWait = 10 * time.Second

// redial connects and initializes again. A daemon killed a moment ago closes the chat's connection before its
// listening socket, so the first dial can reach a socket that is about to go away and see the connection closed
// at initialize: that one failure is retried, for up to redialWait; any other is returned at once.
func (ch *chat) redial(ctx context.Context) (*client.Conn, error) {
	deadline := time.Now().Add(redialWait)
	for {
		nc, err := ch.dial(ctx)
		if err != nil {
			return nil, err
		}
		c, err := client.New(ctx, nc, caps(), ch.handle)
		if err == nil || !errors.Is(err, client.ErrClosed) || time.Now().After(deadline) {
			return c, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// local runs a chat command typed at the prompt instead of sending it to the model: the commands initialize
// advertises (help, new, model, with their aliases), and the client's own /session and /exit. Any other line,
// /tool included, goes to the model. handled is false for such a line; quit asks the chat to end.
func (ch *chat) local(ctx context.Context, line string) (quit, handled bool, err error) {
	if !strings.HasPrefix(line, "/") {
		return false, false, nil
	}
	name, arg, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	arg = strings.TrimSpace(arg)
	id := ""
	for _, c := range ch.c.Init().Commands {
		if c.Name == name || containsString(c.Aliases, name) {
			id = c.ID
		}
	}
	switch {
	case name == "exit" || name == "quit":
		return true, true, nil
	case name == "session":
		ch.mu.Lock()
		sid := ch.sessionID
		ch.mu.Unlock()
		ch.printErr("%s\n", ch.loc.T("chat-repl-bye", "session", sid, "agent", ch.agentAlias, "command", "zeroclaw agent --session "+sid))
		return false, true, nil
	case id == "help":
		ch.printHelp()
		return false, true, nil
	case id == "new":
		return false, true, ch.newSession(ctx)
	case id == "model":
		return false, true, ch.model(ctx, arg)
	}
	return false, false, nil
}

func (ch *chat) printHelp() {
	var b strings.Builder
	b.WriteString("Commands (handled here, not sent to the model):\n")
	desc := map[string]string{"help": "this help", "new": "start a new session with the same agent",
		"model": "show the session's model; /model NAME switches it from the next turn"}
	for _, c := range ch.c.Init().Commands {
		names := "/" + visible.Sanitize(c.Name)
		for _, a := range c.Aliases {
			names += ", /" + visible.Sanitize(a)
		}
		fmt.Fprintf(&b, "  %-18s %s\n", names, desc[c.ID])
	}
	b.WriteString("  /session           show the session id and how to resume it\n")
	b.WriteString("  /exit, /quit       leave (also Ctrl-D, or Ctrl-C twice)\n")
	b.WriteString("Keys: Up/Down history, Ctrl-R search it, Ctrl-C cancels a running turn.\n")
	b.WriteString("Several lines as one message: end a line with \\ to continue it, or wrap the block in \"\"\" ... \"\"\".\n")
	b.WriteString("With the offline echo provider, /tool NAME {json} makes the model call a tool.\n")
	ch.printErr("%s", b.String())
}

// newSession releases the current session and opens a fresh one with the same agent.
func (ch *chat) newSession(ctx context.Context) error {
	ch.mu.Lock()
	old := ch.sessionID
	ch.mu.Unlock()
	var res api.SessionNewResult
	if err := ch.c.Call(ctx, api.MethodSessionNew, api.SessionNewParams{AgentAlias: ch.agentAlias}, &res); err != nil {
		return fmt.Errorf("new session: %w", err)
	}
	_ = ch.c.Call(ctx, api.MethodSessionClose, api.SessionIDParams{SessionID: old}, nil)
	ch.mu.Lock()
	ch.sessionID = res.SessionID
	ch.mu.Unlock()
	ch.printErr("%s\n", ch.loc.T("chat-repl-new-session", "session", res.SessionID, "agent", res.AgentAlias, "command", "zeroclaw agent --session "+old))
	return nil
}

// model shows the session's model, or switches it for this session (session/configure) when name is given.
func (ch *chat) model(ctx context.Context, name string) error {
	ch.mu.Lock()
	sid := ch.sessionID
	ch.mu.Unlock()
	params := api.SessionConfigureParams{SessionID: sid}
	if name != "" {
		raw, _ := json.Marshal(api.SessionOverrides{Model: &name})
		params.Overrides = raw
	}
	var res api.SessionConfigureResult
	if err := ch.c.Call(ctx, api.MethodSessionConfigure, params, &res); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	provider := ""
	var pv api.ConfigGetResult
	if err := ch.c.Call(ctx, api.MethodConfigGet, api.ConfigGetParams{Prop: "agents." + ch.agentAlias + ".model_provider"}, &pv); err == nil {
		provider, _ = pv.Value.(string)
	}
	if res.Overrides.ModelProvider != nil {
		provider = *res.Overrides.ModelProvider
	}
	model := ""
	if res.Overrides.Model != nil {
		model = *res.Overrides.Model
	} else if provider != "" {
		var mv api.ConfigGetResult
		if err := ch.c.Call(ctx, api.MethodConfigGet, api.ConfigGetParams{Prop: "providers.models." + provider + ".model"}, &mv); err == nil {
			model, _ = mv.Value.(string)
		}
	}
	if name != "" {
		ch.printErr("%s\n", ch.loc.T("chat-repl-model", "model", visible.Sanitize(model), "provider", visible.Sanitize(provider)))
		return nil
	}
	ch.printErr("model %s (provider %s); /model NAME switches this session's model\n", visible.Sanitize(model), visible.Sanitize(provider))
	return nil
}
