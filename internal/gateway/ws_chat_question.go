package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/gateway/dashboard"
)

// ChatEvents is what a /ws/chat turn reports to and asks of its socket.
type ChatEvents interface {
	// Update delivers one event of the turn, in order.
	Update(ev api.SessionUpdate)
	// Ask puts a question (ask_user's form) to the person at the socket and waits for the answer or ctx's end;
	// an error wrapping ErrNoQuestion says the socket cannot show that form.
	Ask(ctx context.Context, p api.ElicitationParams) (api.ElicitationResult, error)
}

// ErrNoQuestion: the form is not one the chat can show, or too many questions wait already.
var ErrNoQuestion = dashboard.ErrQuestionForm

// chatMaxQuestions bounds the questions waiting on one socket (a turn asks one at a time; parallel tool calls
// may ask a few).
const chatMaxQuestions = 8

// chatQuestions are the questions a connection's turn is waiting on, by request id.
type chatQuestions struct {
	mu      sync.Mutex
	next    uint64
	pending map[string]*chatQuestion
}

type chatQuestion struct {
	q  dashboard.Question
	ch chan api.ElicitationResult // capacity 1
}

// chatEvents is one turn's ChatEvents on its connection.
type chatEvents struct {
	ch     *chatConn
	ctx    context.Context
	update func(api.SessionUpdate)
}

func (e chatEvents) Update(ev api.SessionUpdate) { e.update(ev) }

// Ask sends a question frame and waits for its question_response.
func (e chatEvents) Ask(ctx context.Context, p api.ElicitationParams) (api.ElicitationResult, error) {
	q, err := dashboard.ParseQuestion(p.RequestedSchema)
	if err != nil {
		return api.ElicitationResult{}, err
	}
	qs := &e.ch.questions
	qs.mu.Lock()
	if len(qs.pending) >= chatMaxQuestions {
		qs.mu.Unlock()
		return api.ElicitationResult{}, errors.Join(ErrNoQuestion, errors.New("ws/chat: too many questions waiting"))
	}
	if qs.pending == nil {
		qs.pending = map[string]*chatQuestion{}
	}
	qs.next++
	id := "q" + strconv.FormatUint(qs.next, 10)
	cq := &chatQuestion{q: q, ch: make(chan api.ElicitationResult, 1)}
	qs.pending[id] = cq
	qs.mu.Unlock()
	defer func() {
		qs.mu.Lock()
		delete(qs.pending, id)
		qs.mu.Unlock()
	}()
	f := map[string]any{"type": "question", "request_id": id, "message": p.Message, "kind": q.Kind}
	if q.Choices != nil {
		f["choices"] = q.Choices
	}
	e.ch.send(e.ctx, f)
	select {
	case res := <-cq.ch:
		return res, nil
	case <-ctx.Done():
		e.ch.send(e.ctx, map[string]any{"type": "question_closed", "request_id": id})
		return api.ElicitationResult{}, ctx.Err()
	}
}

// questionFrame handles a question_response: the answer goes to the question waiting under request_id, or
// the client is told what is wrong (it may answer again while the question waits).
func (ch *chatConn) questionFrame(ctx context.Context, data []byte) {
	var f struct {
		RequestID string `json:"request_id"`
		dashboard.QuestionAnswer
	}
	bad := func(msg string) {
		ch.send(ctx, chatErrorFrame(&ChatError{Code: "INVALID_QUESTION_RESPONSE", Message: msg}))
	}
	if err := json.Unmarshal(data, &f); err != nil {
		bad("question_response: " + err.Error())
		return
	}
	ch.questions.mu.Lock()
	cq := ch.questions.pending[f.RequestID]
	ch.questions.mu.Unlock()
	if cq == nil {
		bad("no question is waiting under request_id " + strconv.Quote(f.RequestID))
		return
	}
	action, content, err := cq.q.Content(f.QuestionAnswer)
	if err != nil {
		bad(err.Error())
		return
	}
	ch.questions.mu.Lock()
	defer ch.questions.mu.Unlock()
	if ch.questions.pending[f.RequestID] != cq {
		bad("no question is waiting under request_id " + strconv.Quote(f.RequestID))
		return
	}
	delete(ch.questions.pending, f.RequestID) // one answer only: a second is "no question is waiting"
	cq.ch <- api.ElicitationResult{Action: action, Content: content}
}
