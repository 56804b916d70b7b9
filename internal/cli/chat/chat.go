// Package chat is the conversation of zeroclaw agent: it sends prompts over a connection to the daemon and
// renders the session's events, asks the user about approvals and the agent's questions, cancels a turn on
// Ctrl-C, and on a terminal runs a line editor with history, local /commands and reconnection.
package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/cli/client"
	"github.com/zeroclaw-go/zeroclaw/internal/cli/hint"
	"github.com/zeroclaw-go/zeroclaw/internal/i18n"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/visible"
)

// Bounds of the agent command's housekeeping calls (the turn itself is unbounded).
const (
	controlTimeout   = 10 * time.Second // session/cancel, session/approve
	turnDrainTimeout = 5 * time.Second  // wait for turn_complete to be rendered after the prompt result
	maxShown         = 200              // bytes of tool input/output echoed on stderr
)

// errInterrupted ends the command after a Ctrl-C; it exits 130 like a shell does.
var errInterrupted = errors.New("agent: interrupted")

// Options are one chat's streams, session and connection.
type Options struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Alias is the agent asked for (-a); "" lets the daemon choose.
	Alias string
	// SessionID is the session to resume (created if it does not exist); "" opens a new one.
	SessionID string
	// OneShot sends Message, prints the answer and returns; otherwise the chat reads prompts from Stdin.
	OneShot bool
	Message string
	// HistoryPath is the line editor's history file (mode 0600); "" keeps none.
	HistoryPath string
	// Dial connects to the daemon, starting an ephemeral one when none runs. The chat dials again when the
	// daemon goes away between turns.
	Dial func(ctx context.Context) (net.Conn, error)
	// Locale writes what the chat says to the user (prompts, notices); nil: English.
	Locale *i18n.Localizer
}

// Run opens the session and holds the conversation until it ends: one turn with OneShot (exit 0 on completed,
// 1 on failed, 130 on cancelled), else until EOF, /exit or an interrupt. The line editor drives the process's
// own terminal; other streams (a test's, a pipe) get plain reads. The session is released at the end; its
// history stays in the store and SessionID resumes it.
func Run(ctx context.Context, o Options) error {
	in := newLineReader(o.Stdin)
	defer in.close()
	ch := &chat{loc: o.Locale, stdout: o.Stdout, stderr: o.Stderr, in: in, ttyIn: isTerminal(o.Stdin), ttyErr: isTerminal(o.Stderr),
		ttyOut: isTerminal(o.Stdout), alias: o.Alias, dial: o.Dial}
	nc, err := o.Dial(ctx)
	if err != nil {
		return err
	}
	c, err := client.New(ctx, nc, caps(), ch.handle)
	if err != nil {
		return err
	}
	ch.c = c
	defer func() { ch.c.Close() }() // the chat may have reconnected

	var res api.SessionNewResult
	if err := c.Call(ctx, api.MethodSessionNew, api.SessionNewParams{AgentAlias: o.Alias, SessionID: o.SessionID}, &res); err != nil {
		return sessionNewError(ch.loc, err)
	}
	ch.mu.Lock()
	ch.sessionID = res.SessionID
	ch.mu.Unlock()
	ch.agentAlias = res.AgentAlias
	defer func() {
		// Release the live session; its history stays in the store and --session ID resumes it.
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		ch.mu.Lock()
		sid := ch.sessionID // /new may have replaced it
		ch.mu.Unlock()
		_ = ch.c.Call(closeCtx, api.MethodSessionClose, api.SessionIDParams{SessionID: sid}, nil)
	}()
	if o.OneShot {
		return ch.oneShot(ctx, o.Message)
	}
	if ch.ttyIn && ch.ttyOut && o.Stdin == os.Stdin && o.Stdout == os.Stdout {
		ch.term = openTerminal(o.HistoryPath)
		defer ch.term.close()
		return ch.repl(ctx, res)
	}
	return ch.interactive(ctx, res)
}

// caps are the client capabilities the chat announces: it answers form elicitations (ask_user).
func caps() map[string]any {
	return map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}
}

// chat is one agent command's conversation: it sends prompts and renders the session's events.
type chat struct {
	loc                   *i18n.Localizer
	stdout, stderr        io.Writer
	in                    *lineReader  // plain reads (pipes, files); nil-safe
	term                  *terminal    // the line editor on a terminal; nil otherwise
	c                     *client.Conn // replaced only between turns, by reconnect
	ttyIn, ttyOut, ttyErr bool
	alias                 string // -a as given ("" lets the daemon choose)
	agentAlias            string // the agent the session runs
	dial                  func(ctx context.Context) (net.Conn, error)

	outMu   sync.Mutex // outMu serializes writes to stdout and stderr and guards midLine
	midLine bool       // stdout's last byte written this turn was not a newline

	mu        sync.Mutex // mu guards the fields below
	sessionID string
	inputCtx  context.Context // cancelled when the current turn is interrupted: pending questions stop waiting
	turnDone  chan struct{}   // closed once the current turn's turn_complete has been rendered
	final     *api.SessionUpdate
	// cancelTurn interrupts the running turn of the terminal chat (Ctrl-C); nil between turns.
	cancelTurn context.CancelFunc
}

// oneShot runs one turn: exit 0 on completed, 1 on failed, 130 on cancelled.
func (ch *chat) oneShot(ctx context.Context, prompt string) error {
	outcome, detail, err := ch.turn(ctx, prompt)
	if err != nil {
		return err
	}
	switch outcome {
	case api.OutcomeCompleted:
		return nil
	case api.OutcomeCancelled:
		return &hint.Error{Err: errors.New("agent: turn cancelled"), Code: 130}
	default:
		return fmt.Errorf("agent: turn %s: %s", outcome, visible.Sanitize(detail))
	}
}

// interactive reads prompts from stdin until EOF or /exit. A turn interrupted by Ctrl-C ends the command
// (exit 130) once the daemon has confirmed the cancellation, since the interrupt also ends the command's context.
func (ch *chat) interactive(ctx context.Context, res api.SessionNewResult) error {
	if ch.ttyIn {
		ch.printErr("%s\n", ch.loc.T("chat-session-banner", "session", res.SessionID, "agent", res.AgentAlias, "count", res.MessageCount))
	}
	for {
		if ch.ttyIn {
			ch.printErr("> ")
		}
		line, err := ch.in.readLine(ctx)
		if errors.Is(err, io.EOF) {
			if ch.ttyIn {
				ch.printErr("\n")
			}
			return nil
		}
		if err != nil {
			return &hint.Error{Err: errInterrupted, Code: 130}
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if quit, handled, err := ch.local(ctx, line); handled {
			if err != nil {
				ch.printErr("Error: %v\n", err)
			}
			if quit {
				return nil
			}
			continue
		}
		outcome, detail, err := ch.send(ctx, ctx, line)
		if err != nil {
			return err
		}
		switch {
		case outcome == "":
		case outcome == api.OutcomeCancelled && ctx.Err() != nil:
			return &hint.Error{Err: errors.New("agent: turn cancelled"), Code: 130}
		case outcome == api.OutcomeCancelled:
			ch.printErr("%s\n", ch.loc.T("chat-turn-cancelled"))
		case outcome != api.OutcomeCompleted:
			ch.printErr("Error: turn %s: %s\n", outcome, visible.Sanitize(detail))
		}
	}
}

// turn sends one session/prompt and renders its events until turn_complete. It returns the outcome and, for a
// failed turn, the error text. When ctx ends during the turn it sends session/cancel and keeps waiting for the
// daemon to end the turn; a second interrupt closes the connection and returns errInterrupted.
func (ch *chat) turn(ctx context.Context, prompt string) (outcome, detail string, err error) {
	connCtx := context.WithoutCancel(ctx)
	inputCtx, cancelInput := context.WithCancel(connCtx)
	defer cancelInput()
	done := make(chan struct{})
	ch.mu.Lock()
	sid := ch.sessionID
	ch.inputCtx, ch.turnDone, ch.final = inputCtx, done, nil
	ch.mu.Unlock()
	ch.outMu.Lock()
	ch.midLine = false
	ch.outMu.Unlock()

	stop := make(chan struct{})
	var aborted atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() { ch.watchInterrupt(ctx, stop, sid, cancelInput, &aborted) })
	var res api.SessionPromptResult
	err = ch.c.Call(connCtx, api.MethodSessionPrompt, api.SessionPromptParams{SessionID: sid, Prompt: prompt}, &res)
	close(stop)
	wg.Wait()
	if aborted.Load() {
		return "", "", &hint.Error{Err: errInterrupted, Code: 130}
	}
	if err != nil {
		return "", "", fmt.Errorf("agent: prompt: %w", err)
	}
	// The result is resolved by the connection's reader, while events queue in order behind it: let the
	// renderer catch up to turn_complete before printing anything else.
	drain := time.NewTimer(turnDrainTimeout)
	select {
	case <-done:
	case <-ch.c.Done():
	case <-drain.C:
	}
	drain.Stop()
	ch.outMu.Lock()
	if ch.midLine {
		fmt.Fprintln(ch.stdout)
		ch.midLine = false
	}
	ch.outMu.Unlock()

	detail = res.Content
	ch.mu.Lock()
	if ch.final != nil && ch.final.Error != "" {
		detail = ch.final.Error
	}
	ch.mu.Unlock()
	if res.Outcome == "" {
		res.Outcome = api.OutcomeFailed
	}
	return res.Outcome, detail, nil
}

// watchInterrupt turns the end of ctx during a turn into session/cancel, and a second SIGINT into closing the
// connection. It returns when stop is closed.
func (ch *chat) watchInterrupt(ctx context.Context, stop <-chan struct{}, sid string, cancelInput func(), aborted *atomic.Bool) {
	select {
	case <-stop:
		return
	case <-ctx.Done():
	}
	// From here on, another SIGINT means "quit now". The root context's own handler keeps the default action
	// (process death) away, so we must register before announcing it.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	defer signal.Stop(sig)
	cancelInput()
	ch.printErr("\n%s\n", ch.loc.T("chat-cancelling"))
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), controlTimeout)
	defer cancel()
	var cr api.SessionCancelResult
	if err := ch.c.Call(cctx, api.MethodSessionCancel, api.SessionIDParams{SessionID: sid}, &cr); err != nil &&
		!errors.Is(err, jsonrpc.NewError(api.CodeSessionNotFound, "", nil)) {
		ch.printErr("session/cancel: %v\n", err)
	}
	select {
	case <-stop:
	case <-sig:
		aborted.Store(true)
		ch.c.Abort()
	}
}

// handle receives session/update notifications (in order) and elicitation/create requests (concurrently).
func (ch *chat) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	switch req.Method {
	case api.NotifySessionUpdate:
		var u api.SessionUpdate
		if err := json.Unmarshal(req.Params, &u); err == nil {
			ch.onUpdate(ctx, u)
		}
		return nil, nil
	case api.MethodElicitationCreate:
		var p api.ElicitationParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, jsonrpc.NewError(api.CodeInvalidParams, "invalid elicitation/create params", nil)
		}
		return ch.elicit(ctx, p), nil
	}
	if req.IsNotification() {
		return nil, nil
	}
	return nil, jsonrpc.NewError(api.CodeMethodNotFound, "Unknown method: "+req.Method, nil)
}

func (ch *chat) onUpdate(ctx context.Context, u api.SessionUpdate) {
	ch.mu.Lock()
	ours := u.SessionID == ch.sessionID
	ch.mu.Unlock()
	if !ours {
		return
	}
	switch u.Type {
	case api.UpdateAgentMessageChunk:
		ch.outMu.Lock()
		if u.Text != "" {
			text := u.Text
			if ch.ttyOut { // a file or pipe gets the answer as written; a terminal must not act on it
				text = forTerminal(text)
			}
			fmt.Fprint(ch.stdout, text)
			ch.midLine = !strings.HasSuffix(u.Text, "\n")
		}
		ch.outMu.Unlock()
	case api.UpdateAgentThoughtChunk:
		if ch.ttyErr {
			ch.printErr("\x1b[2m%s\x1b[0m", forTerminal(u.Text))
		} else {
			ch.printErr("%s", forTerminal(u.Text))
		}
	case api.UpdateToolCall:
		ch.printErr("[tool %s] %s\n", visible.Sanitize(u.Name), clip(string(u.RawInput)))
	case api.UpdateToolResult:
		out := ""
		if u.RawOutput != nil {
			out = *u.RawOutput
		}
		status := "ok"
		if u.IsError {
			status = "error"
		}
		ch.printErr("[tool %s %s] %s\n", visible.Sanitize(u.Name), status, clip(out))
	case api.UpdateApprovalRequest:
		ch.approve(ctx, u)
	case api.UpdateHistoryTrimmed:
		ch.printErr("%s\n", ch.loc.T("chat-history-trimmed"))
	case api.UpdateTurnComplete:
		ch.mu.Lock()
		final := u
		ch.final = &final
		if ch.turnDone != nil {
			close(ch.turnDone)
			ch.turnDone = nil
		}
		ch.mu.Unlock()
	}
}

// approve asks the user about one tool call and answers session/approve. EOF on stdin rejects. The daemon
// escapes the summary already; it is escaped again here (visible.Sanitize leaves the daemon's escapes as they
// are) so that no daemon can make the terminal draw something else, and each line of a multi-line summary is
// shown indented on its own row.
func (ch *chat) approve(ctx context.Context, u api.SessionUpdate) {
	lines := visible.SanitizeLines(u.ArgumentsSummary)
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s\n", ch.loc.T("chat-approval-wants", "tool", visible.Sanitize(u.ToolName), "summary", lines[0]))
	for _, l := range lines[1:] {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	ch.printErr("%s", b.String())
	line, err := ch.readAnswer(ctx, ch.loc.T("chat-approval-prompt")+" ")
	decision := api.DecisionReject
	switch {
	case errors.Is(err, io.EOF):
		ch.printErr("\n%s\n", ch.loc.T("chat-approval-eof"))
	case err != nil:
		ch.printErr("\n")
		return // the turn is being cancelled, which denies the request
	default:
		decision = approvalAnswer(ch.loc, line)
	}
	cctx, cancel := context.WithTimeout(ctx, controlTimeout)
	defer cancel()
	ch.mu.Lock()
	sid := ch.sessionID
	ch.mu.Unlock()
	var res api.SessionApproveResult
	p := api.SessionApproveParams{SessionID: sid, RequestID: u.RequestID, Decision: decision}
	if err := ch.c.Call(cctx, api.MethodSessionApprove, p, &res); err != nil {
		ch.printErr("session/approve: %v\n", err)
	}
}

// approvalAnswer reads the answer to an approval prompt: the English words (y, yes, a, always) always work,
// and so do the locale's own (chat-approval-yes, chat-approval-always: comma-separated words). Anything else
// rejects.
func approvalAnswer(loc *i18n.Localizer, line string) string {
	a := strings.ToLower(strings.TrimSpace(line))
	in := func(key string, english ...string) bool {
		words := append(english, strings.Split(loc.T(key), ",")...)
		for _, w := range words {
			if w = strings.TrimSpace(w); w != "" && a == strings.ToLower(w) {
				return true
			}
		}
		return false
	}
	switch {
	case a == "":
		return api.DecisionReject
	case in("chat-approval-yes", "y", "yes"):
		return api.DecisionAllowOnce
	case in("chat-approval-always", "a", "always"):
		return api.DecisionAllowAlways
	}
	return api.DecisionReject
}

// elicit shows the agent's question and returns the answer: accept with the line read, decline on EOF, cancel
// when the turn is interrupted.
func (ch *chat) elicit(ctx context.Context, p api.ElicitationParams) api.ElicitationResult {
	form := parseElicitForm(p.RequestedSchema)
	var b strings.Builder
	b.WriteString("\n")
	for _, l := range visible.SanitizeLines(p.Message) {
		fmt.Fprintf(&b, "%s\n", l)
	}
	if form.multi {
		b.WriteString("  " + ch.loc.T("chat-elicit-several") + "\n")
	}
	for i, c := range form.titles {
		fmt.Fprintf(&b, "  %d) %s\n", i+1, visible.Sanitize(c))
	}
	ch.printErr("%s", b.String())
	line, err := ch.readAnswer(ctx, ch.loc.T("chat-elicit-prompt")+" ")
	switch {
	case errors.Is(err, io.EOF):
		ch.printErr("\n%s\n", ch.loc.T("chat-elicit-eof"))
		return api.ElicitationResult{Action: "decline"}
	case err != nil:
		ch.printErr("\n")
		return api.ElicitationResult{Action: "cancel"}
	}
	return api.ElicitationResult{Action: "accept", Content: form.content(line)}
}

// readAnswer shows prompt and reads one line for a question asked during a turn; it stops waiting when the turn
// is interrupted or the connection ends (ctx). Ctrl-C at the terminal's prompt interrupts the turn.
func (ch *chat) readAnswer(ctx context.Context, prompt string) (string, error) {
	ch.mu.Lock()
	inputCtx := ch.inputCtx
	ch.mu.Unlock()
	if inputCtx == nil {
		inputCtx = ctx
	}
	rctx, cancel := context.WithCancel(inputCtx)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	if ch.term != nil {
		line, err := ch.term.prompt(rctx, prompt, false)
		if errors.Is(err, errPromptInterrupted) {
			ch.interrupt()
		}
		return line, err
	}
	ch.printErr("%s", prompt)
	line, err := ch.in.readLine(rctx)
	if err == nil && !ch.ttyIn {
		ch.printErr("%s\n", line) // a terminal echoes what was typed; piped input does not
	}
	return line, err
}

// printErr writes to stderr; a partial answer line on a terminal is ended first so the two do not run together.
func (ch *chat) printErr(format string, args ...any) {
	ch.outMu.Lock()
	defer ch.outMu.Unlock()
	if ch.midLine && ch.ttyOut && ch.ttyErr {
		fmt.Fprintln(ch.stdout)
		ch.midLine = false
	}
	fmt.Fprintf(ch.stderr, format, args...)
}

// sessionNewError words a refused session/new for the terminal: when the daemon could not pick an agent, it
// lists the enabled ones and says how to choose.
func sessionNewError(loc *i18n.Localizer, err error) error {
	var data struct {
		EnabledAgents *[]string `json:"enabled_agents"`
	}
	if client.ErrorData(err, &data) && data.EnabledAgents != nil {
		names := *data.EnabledAgents
		if len(names) == 0 {
			return hint.With(errors.New(loc.T("chat-no-agent-enabled")), "zeroclaw config set agents.<alias>.enabled true")
		}
		return hint.With(errors.New(loc.T("chat-agents-enabled", "count", len(names), "agents", strings.Join(names, ", "))),
			loc.T("chat-agents-enabled-hint", "command", "zeroclaw agent -a "+names[0]))
	}
	return fmt.Errorf("agent: open session: %w", err)
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// clip shortens s to one line of at most maxShown bytes (before escaping) for the stderr tool log.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxShown {
		cut := maxShown
		for cut > 0 && !utf8RuneStart(s[cut]) {
			cut--
		}
		return visible.Sanitize(s[:cut]) + "…"
	}
	return visible.Sanitize(s)
}

// forTerminal escapes what a terminal would act on in model text, keeping its line breaks and tabs.
func forTerminal(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		cells := strings.Split(l, "\t")
		for j, c := range cells {
			cells[j] = visible.Sanitize(c)
		}
		lines[i] = strings.Join(cells, "\t")
	}
	return strings.Join(lines, "\n")
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// isTerminal reports whether v is a character device such as a terminal.
func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok || f == nil {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
