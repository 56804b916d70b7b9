package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
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

func runAgent(ctx context.Context, env Env, args []string) error {
	fs := newFlagSet(env, "agent", "[--config-dir DIR] [--agent ALIAS] [-m MSG] [--session ID]")
	configDir := configDirFlag(fs)
	alias := fs.String("agent", "", "agent alias (default: the only configured agent); -a for short")
	fs.StringVar(alias, "a", "", "short for --agent")
	msg := fs.String("m", "", "send this one message, print the answer and exit; --message in full")
	fs.StringVar(msg, "message", "", "the same as -m")
	sessionID := fs.String("session", "", "resume the session with this id (created if it does not exist)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	oneShot := false
	fs.Visit(func(f *flag.Flag) { oneShot = oneShot || f.Name == "m" || f.Name == "message" })
	if oneShot && strings.TrimSpace(*msg) == "" {
		return withHint(errors.New("agent: -m needs a non-blank message"), `zeroclaw agent -m "hello"`)
	}

	in := newLineReader(env.Stdin)
	defer in.close()
	ch := &chat{env: env, in: in, ttyIn: isTerminal(env.Stdin), ttyErr: isTerminal(env.Stderr), ttyOut: isTerminal(env.Stdout),
		alias: *alias, configDir: *configDir}
	nc, err := dialOrSpawn(ctx, env, *configDir)
	if err != nil {
		return err
	}
	c, err := newClient(ctx, nc, chatCaps(), ch.handle)
	if err != nil {
		return err
	}
	ch.c = c
	defer func() { ch.c.close() }() // the chat may have reconnected

	var res api.SessionNewResult
	if err := c.call(ctx, api.MethodSessionNew, api.SessionNewParams{AgentAlias: *alias, SessionID: *sessionID}, &res); err != nil {
		return sessionNewError(err)
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
		_ = ch.c.call(closeCtx, api.MethodSessionClose, api.SessionIDParams{SessionID: sid}, nil)
	}()
	if oneShot {
		return ch.oneShot(ctx, *msg)
	}
	if ch.ttyIn && ch.ttyOut && env.Stdin == os.Stdin && env.Stdout == os.Stdout {
		// The line editor drives the process's own terminal; a test's Env or a pipe gets plain reads.
		hist := ""
		if layout, err := install.Resolve(*configDir, env.Getenv, env.Home); err == nil {
			hist = filepath.Join(layout.StateDir(), historyFile)
		}
		ch.term = openTerminal(hist)
		defer ch.term.close()
		return ch.repl(ctx, res)
	}
	return ch.interactive(ctx, res)
}

// chatCaps are the client capabilities the chat announces: it answers form elicitations (ask_user).
func chatCaps() map[string]any {
	return map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}
}

// chat is one agent command's conversation: it sends prompts and renders the session's events.
type chat struct {
	env                   Env
	in                    *lineReader // plain reads (pipes, files); nil-safe
	term                  *terminal   // the line editor on a terminal; nil otherwise
	c                     *client     // replaced only between turns, by reconnect
	ttyIn, ttyOut, ttyErr bool
	alias                 string // -a as given ("" lets the daemon choose)
	agentAlias            string // the agent the session runs
	configDir             string

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
		return &HintError{Err: errors.New("agent: turn cancelled"), Code: 130}
	default:
		return fmt.Errorf("agent: turn %s: %s", outcome, visible.Sanitize(detail))
	}
}

// interactive reads prompts from stdin until EOF or /exit. A turn interrupted by Ctrl-C ends the command
// (exit 130) once the daemon has confirmed the cancellation, since the interrupt also ends the command's context.
func (ch *chat) interactive(ctx context.Context, res api.SessionNewResult) error {
	if ch.ttyIn {
		ch.printErr("session %s with agent %s (%d messages); /exit or Ctrl-D to leave\n", res.SessionID, res.AgentAlias, res.MessageCount)
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
			return &HintError{Err: errInterrupted, Code: 130}
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
			return &HintError{Err: errors.New("agent: turn cancelled"), Code: 130}
		case outcome == api.OutcomeCancelled:
			ch.printErr("(turn cancelled)\n")
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
	err = ch.c.call(connCtx, api.MethodSessionPrompt, api.SessionPromptParams{SessionID: sid, Prompt: prompt}, &res)
	close(stop)
	wg.Wait()
	if aborted.Load() {
		return "", "", &HintError{Err: errInterrupted, Code: 130}
	}
	if err != nil {
		return "", "", fmt.Errorf("agent: prompt: %w", err)
	}
	// The result is resolved by the connection's reader, while events queue in order behind it: let the
	// renderer catch up to turn_complete before printing anything else.
	drain := time.NewTimer(turnDrainTimeout)
	select {
	case <-done:
	case <-ch.c.conn.Done():
	case <-drain.C:
	}
	drain.Stop()
	ch.outMu.Lock()
	if ch.midLine {
		fmt.Fprintln(ch.env.Stdout)
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
	ch.printErr("\ncancelling the turn (interrupt again to quit)\n")
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), controlTimeout)
	defer cancel()
	var cr api.SessionCancelResult
	if err := ch.c.call(cctx, api.MethodSessionCancel, api.SessionIDParams{SessionID: sid}, &cr); err != nil &&
		!errors.Is(err, jsonrpc.NewError(api.CodeSessionNotFound, "", nil)) {
		ch.printErr("session/cancel: %v\n", err)
	}
	select {
	case <-stop:
	case <-sig:
		aborted.Store(true)
		ch.c.conn.Close()
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
			fmt.Fprint(ch.env.Stdout, text)
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
		ch.printErr("(older messages were trimmed from the model's context)\n")
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
	fmt.Fprintf(&b, "\n%s wants to run: %s\n", visible.Sanitize(u.ToolName), lines[0])
	for _, l := range lines[1:] {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	ch.printErr("%s", b.String())
	line, err := ch.readAnswer(ctx, "Allow? [y]es / [n]o / [a]lways: ")
	decision := api.DecisionReject
	switch {
	case errors.Is(err, io.EOF):
		ch.printErr("\n(no answer on stdin: rejected)\n")
	case err != nil:
		ch.printErr("\n")
		return // the turn is being cancelled, which denies the request
	default:
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			decision = api.DecisionAllowOnce
		case "a", "always":
			decision = api.DecisionAllowAlways
		}
	}
	cctx, cancel := context.WithTimeout(ctx, controlTimeout)
	defer cancel()
	ch.mu.Lock()
	sid := ch.sessionID
	ch.mu.Unlock()
	var res api.SessionApproveResult
	p := api.SessionApproveParams{SessionID: sid, RequestID: u.RequestID, Decision: decision}
	if err := ch.c.call(cctx, api.MethodSessionApprove, p, &res); err != nil {
		ch.printErr("session/approve: %v\n", err)
	}
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
		b.WriteString("  (several: numbers separated by commas)\n")
	}
	for i, c := range form.titles {
		fmt.Fprintf(&b, "  %d) %s\n", i+1, visible.Sanitize(c))
	}
	ch.printErr("%s", b.String())
	line, err := ch.readAnswer(ctx, "Answer: ")
	switch {
	case errors.Is(err, io.EOF):
		ch.printErr("\n(no answer on stdin: declined)\n")
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
		fmt.Fprintln(ch.env.Stdout)
		ch.midLine = false
	}
	fmt.Fprintf(ch.env.Stderr, format, args...)
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

// lineReader hands stdin lines to whoever asks, one line to one reader, and lets a reader stop waiting when its
// ctx ends. Its pump goroutine ends at EOF or on close; a pump blocked inside a terminal read cannot be
// interrupted and ends with the process.
type lineReader struct {
	r     io.Reader
	once  sync.Once
	lines chan string   // closed by the pump after EOF or a read error
	done  chan struct{} // closed by close

	mu  sync.Mutex // mu guards err
	err error      // why lines was closed
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: r, lines: make(chan string), done: make(chan struct{})}
}

func (l *lineReader) pump() {
	defer close(l.lines)
	br := bufio.NewReader(l.r)
	for {
		s, err := br.ReadString('\n')
		if s != "" {
			select {
			case l.lines <- strings.TrimRight(s, "\r\n"):
			case <-l.done:
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				err = fmt.Errorf("agent: reading stdin: %w: %w", io.EOF, err)
			}
			l.mu.Lock()
			l.err = err
			l.mu.Unlock()
			return
		}
	}
}

// readLine returns the next line without its line ending; io.EOF (or an error wrapping it) once input ends; or
// ctx's error.
func (l *lineReader) readLine(ctx context.Context) (string, error) {
	if l.r == nil {
		return "", io.EOF
	}
	l.once.Do(func() { go l.pump() })
	select {
	case s, ok := <-l.lines:
		if ok {
			return s, nil
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		return "", l.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// close releases a pump waiting to hand over a line.
func (l *lineReader) close() {
	select {
	case <-l.done:
	default:
		close(l.done)
	}
}

// sessionNewError words a refused session/new for the terminal: when the daemon could not pick an agent, it
// lists the enabled ones and says how to choose.
func sessionNewError(err error) error {
	var data struct {
		EnabledAgents *[]string `json:"enabled_agents"`
	}
	if errorData(err, &data) && data.EnabledAgents != nil {
		names := *data.EnabledAgents
		if len(names) == 0 {
			return withHint(errors.New("agent: no agent is enabled"), "zeroclaw config set agents.<alias>.enabled true")
		}
		return withHint(fmt.Errorf("agent: %d agents are enabled: %s", len(names), strings.Join(names, ", ")),
			fmt.Sprintf("choose one with -a, e.g. zeroclaw agent -a %s", names[0]))
	}
	return fmt.Errorf("agent: open session: %w", err)
}
