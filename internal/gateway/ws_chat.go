package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/gateway/dashboard"
)

// /ws/chat limits: the largest client frame, the messages one connection may queue behind a running turn
// (upstream's steering queue), and how long a frame write may take before the socket is given up.
const (
	ChatMaxFrameBytes = 256 << 10
	ChatSteeringDepth = 8
	chatWriteTimeout  = 30 * time.Second
	ChatSubprotocol   = "zeroclaw.v1"
)

// Chat is the session layer as /ws/chat uses it (the daemon implements it over the session manager).
type Chat interface {
	// Open creates, or with p.SessionID resumes, a chat session owned by id's principal, bound to one
	// WebSocket connection. Its error is shown to the client (code AGENT_INIT_FAILED).
	Open(ctx context.Context, id Identity, p ChatOpen) (ChatSession, ChatStarted, error)
}

// ChatOpen is what the upgrade request asks for.
type ChatOpen struct {
	Agent     string
	SessionID string // "": a new session
	Cwd       string
}

// ChatStarted is the session_start frame's content.
type ChatStarted struct {
	SessionID    string
	Resumed      bool
	MessageCount int
}

// ChatSession is one connection's handle on its session.
type ChatSession interface {
	// Prompt runs one turn as session/prompt does, delivering its events to events in order and putting its
	// questions to it. A turn that could not start returns a *ChatError (or another error: AGENT_ERROR).
	Prompt(ctx context.Context, content string, events ChatEvents) (api.SessionPromptResult, error)
	// Approve answers a pending approval_request with an api.Decision* value (replacement: reject_with_edit's
	// edited arguments); false when none was pending or the answer was refused.
	Approve(requestID, decision string, replacement json.RawMessage) bool
	// Close cancels the connection's turns and denies its approvals; the session stays.
	Close()
}

// ChatError is an error frame's code and message.
type ChatError struct {
	Code    string
	Message string
}

func (e *ChatError) Error() string { return e.Code + ": " + e.Message }

// wsChat is GET /ws/chat: ws-bearer auth and ?agent= are checked before the upgrade, then the frame protocol
// of upstream's ws.rs runs until the client leaves.
func (s *Server) wsChat(w http.ResponseWriter, r *http.Request) error {
	c, err := s.wsAuthenticate(r)
	if err != nil {
		return err
	}
	agent := agentParam(r)
	if agent == "" {
		return fail(http.StatusBadRequest, "query parameter agent is required (the agent alias to chat with)")
	}
	if _, known := s.o.Daemon.Config().Agents[agent]; !known {
		return fail(http.StatusBadRequest, "Unknown agent: "+agent)
	}
	if !c.principal.Allows(api.GrantSessionsExecute) {
		return fail(http.StatusForbidden, "Forbidden: missing grant "+api.GrantSessionsExecute)
	}
	if !c.principal.AllowsAgent(agent) {
		return fail(http.StatusForbidden, "Forbidden: this device's permission profiles do not allow agent "+agent+
			" (allowed_agents)")
	}
	return s.upgrade(w, r, []string{ChatSubprotocol}, func(ctx context.Context, conn *websocket.Conn) {
		// The library's own limit is never reached: readChatFrame stops one byte past ChatMaxFrameBytes.
		conn.SetReadLimit(ChatMaxFrameBytes + 1)
		q := r.URL.Query()
		ch := &chatConn{s: s, conn: conn, c: c, agent: agent}
		ch.serve(ctx, ChatOpen{Agent: agent, SessionID: q.Get("session_id"), Cwd: q.Get("cwd")})
	})
}

// chatConn is one /ws/chat connection: the handler's goroutine reads frames, one goroutine runs the queued
// turns, one pings. coder/websocket serializes concurrent writes.
type chatConn struct {
	s     *Server
	conn  *websocket.Conn
	c     caller
	agent string
	sess  ChatSession
	// questions are the questions the running turn waits on (question frames).
	questions chatQuestions
}

func (ch *chatConn) serve(ctx context.Context, open ChatOpen) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sess, started, err := ch.s.o.Daemon.Open(ctx, ch.c.identity(), open)
	if err != nil {
		ch.send(ctx, chatErrorFrame(&ChatError{Code: "AGENT_INIT_FAILED", Message: err.Error()}))
		_ = ch.conn.Close(websocket.StatusInternalError, "agent init failed")
		return
	}
	ch.sess = sess
	defer sess.Close()
	ch.send(ctx, map[string]any{"type": "session_start", "session_id": started.SessionID, "resumed": started.Resumed,
		"message_count": started.MessageCount})

	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel() // runs before wg.Wait: the turn runner and the pinger stop
	if secs := ch.s.o.Daemon.Config().Gateway.WebSocketPingIntervalSecs; secs > 0 {
		every := time.Duration(secs) * time.Second
		wg.Go(func() { keepAlive(ctx, ch.conn, every, every, nil) })
	}
	queue := make(chan string, ChatSteeringDepth)
	wg.Go(func() { ch.runTurns(ctx, queue) })
	for {
		data, err := readChatFrame(ctx, ch.conn, ch.s.frameTimeout())
		if errors.Is(err, errChatFrameTooBig) {
			// Close sends one close frame, then skips the rest of the oversized frame while it waits for the
			// peer's answer (bounded by the library's 5 s): the client sees 1009 instead of a reset that can
			// arrive while it is still writing. ctx must stay live until then: its end closes the socket.
			_ = ch.conn.Close(websocket.StatusMessageTooBig, "frame exceeds 256 KiB")
			return
		}
		if err != nil {
			return
		}
		ch.frame(ctx, data, queue)
	}
}

var errChatFrameTooBig = errors.New("ws/chat: frame too big")

// readChatFrame reads one client message of at most ChatMaxFrameBytes, which must arrive whole within timeout
// once it has begun; a longer one is errChatFrameTooBig with its remainder left unread.
func readChatFrame(ctx context.Context, conn *websocket.Conn, timeout time.Duration) ([]byte, error) {
	m, err := nextMessage(ctx, conn, timeout)
	if err != nil {
		return nil, err
	}
	defer m.end()
	data, err := io.ReadAll(io.LimitReader(m.r, ChatMaxFrameBytes+1))
	if err != nil {
		return nil, m.err(err)
	}
	if len(data) > ChatMaxFrameBytes {
		return nil, errChatFrameTooBig
	}
	return data, nil
}

// frame handles one client frame.
func (ch *chatConn) frame(ctx context.Context, data []byte, queue chan<- string) {
	var f struct {
		Type      string `json:"type"`
		Content   string `json:"content"`
		RequestID string `json:"request_id"`
		Decision  string `json:"decision"`
		// Replacement (ours) goes with decision "edit": the call's arguments as the person edited them.
		Replacement json.RawMessage `json:"replacement"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		ch.send(ctx, chatErrorFrame(&ChatError{Code: "INVALID_JSON", Message: "Invalid JSON: " + strings.TrimPrefix(err.Error(), "json: ")}))
		return
	}
	switch f.Type {
	case "connect":
		ch.send(ctx, map[string]any{"type": "connected", "message": "Connection established"})
	case "message":
		if strings.TrimSpace(f.Content) == "" {
			ch.send(ctx, chatErrorFrame(&ChatError{Code: "EMPTY_CONTENT", Message: "Message content cannot be empty"}))
			return
		}
		select {
		case queue <- f.Content:
		default:
			ch.send(ctx, chatErrorFrame(&ChatError{Code: "STEERING_QUEUE_FULL", Message: "Steering queue is full for the running turn"}))
		}
	case "approval_response":
		if ch.sopFrame(ctx, data) { // kind "sop": a SOP gate, keyed by run_id
			return
		}
		decision, ok := dashboard.ChatDecisions[f.Decision]
		if f.RequestID == "" || !ok {
			ch.send(ctx, chatErrorFrame(&ChatError{Code: "INVALID_APPROVAL_RESPONSE",
				Message: "approval_response requires request_id and decision in {approve,deny,always,edit}"}))
			return
		}
		var replacement json.RawMessage
		if decision == api.DecisionRejectWithEdit {
			if !dashboard.IsJSONObject(f.Replacement) {
				ch.send(ctx, chatErrorFrame(&ChatError{Code: "INVALID_APPROVAL_RESPONSE",
					Message: "decision edit needs replacement: the call's arguments as a JSON object"}))
				return
			}
			replacement = f.Replacement
		}
		if !ch.sess.Approve(f.RequestID, decision, replacement) && decision == api.DecisionRejectWithEdit {
			ch.send(ctx, chatErrorFrame(&ChatError{Code: "APPROVAL_NOT_TAKEN",
				Message: "the edited call was not taken: nothing pending under that request_id, or this device may not run it"}))
		}
	case "question_response":
		ch.questionFrame(ctx, data)
	default:
		ch.send(ctx, chatErrorFrame(&ChatError{Code: "UNKNOWN_MESSAGE_TYPE", Message: "Unknown message type: " + f.Type}))
	}
}

// runTurns runs the queued messages one after another until ctx ends.
func (ch *chatConn) runTurns(ctx context.Context, queue <-chan string) {
	for {
		select {
		case <-ctx.Done():
			return
		case content := <-queue:
			ch.turn(ctx, content)
		}
	}
}

// turn runs one message as a turn and streams it: chunk, thinking, tool_call, tool_result, approval_request,
// plan, history_trimmed, then done, aborted or an error.
func (ch *chatConn) turn(ctx context.Context, content string) {
	// The grant is checked again against the config in force: a revoked token or grant stops the next turn.
	if resolve := ch.c.resolve; resolve != nil {
		if pr := resolve(ch.s.o.Daemon.Config()); pr == nil || !pr.Allows(api.GrantSessionsExecute) {
			ch.send(ctx, chatErrorFrame(&ChatError{Code: "FORBIDDEN", Message: "Forbidden: missing grant " + api.GrantSessionsExecute}))
			return
		}
	}
	var in, out int
	res, err := ch.sess.Prompt(ctx, content, chatEvents{ch: ch, ctx: ctx, update: func(ev api.SessionUpdate) {
		if ev.Type == api.UpdateContextUsage {
			in += dashboard.Deref(ev.InputTokens)
			out += dashboard.Deref(ev.OutputTokens)
		}
		if f := dashboard.ChatEventFrame(ev); f != nil {
			ch.send(ctx, f)
		}
	}})
	if err != nil {
		var ce *ChatError
		if !errors.As(err, &ce) {
			ce = &ChatError{Code: "AGENT_ERROR", Message: err.Error()}
		}
		ch.send(ctx, chatErrorFrame(ce))
		return
	}
	switch res.Outcome {
	case api.OutcomeCancelled:
		ch.send(ctx, map[string]any{"type": "aborted"})
	case api.OutcomeFailed:
		ch.send(ctx, chatErrorFrame(&ChatError{Code: "PROVIDER_ERROR", Message: res.Content}))
	default:
		ch.send(ctx, dashboard.ChatDoneFrame(ch.s.o.Daemon.Config(), ch.agent, res.Content, in, out))
	}
}

func chatErrorFrame(e *ChatError) map[string]any {
	return map[string]any{"type": "error", "message": e.Message, "code": e.Code}
}

// send writes one frame; a write that cannot finish in time closes the socket (the read loop then ends).
func (ch *chatConn) send(ctx context.Context, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	wctx, cancel := context.WithTimeout(ctx, chatWriteTimeout)
	defer cancel()
	_ = ch.conn.Write(wctx, websocket.MessageText, b)
}
