package channel

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// Approval decisions a chat can give (the api's).
const (
	DecisionAllowOnce  = "allow_once"
	DecisionRejectOnce = "reject_once"
)

// pendingApproval is one prompt waiting for its button press.
type pendingApproval struct {
	requester string      // the sender whose message started the turn: only they may answer
	answer    chan string // one decision
}

// approver returns the Approve function of ev's turn: a prompt in ev's chat, bound to the call by a fresh
// token, answered only by ev's sender, denied on timeout. A channel whose adapter cannot prompt denies.
func (r *runner) approver(ev store.ChanEvent) func(ctx context.Context, a ApprovalAsk) (string, error) {
	return func(ctx context.Context, a ApprovalAsk) (string, error) {
		pr, ok := r.ad.(Prompter)
		if !ok {
			return DecisionRejectOnce, nil
		}
		var b [12]byte
		_, _ = rand.Read(b[:])
		token := hex.EncodeToString(b[:])
		p := &pendingApproval{requester: ev.Sender, answer: make(chan string, 1)}
		r.mu.Lock()
		r.approvals[token] = p
		r.mu.Unlock()
		defer func() {
			r.mu.Lock()
			delete(r.approvals, token)
			r.mu.Unlock()
		}()
		text := fmt.Sprintf("🔐 Approve tool call?\n%s\n%s", a.ToolName, clip(a.Summary, 1500))
		if _, err := pr.Prompt(ctx, ApprovalPrompt{ReplyTarget: ev.ReplyTarget, Thread: ev.Thread, Token: token, Text: text}); err != nil {
			return DecisionRejectOnce, nil
		}
		t := r.c.o.Clock.NewTimer(r.inst.ApprovalTimeout)
		defer t.Stop()
		select {
		case d := <-p.answer:
			return d, nil
		case <-t.C:
			return "", ErrApprovalTimeout
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// answerApproval routes a pressed button to its prompt. Only the requester's press counts; a stale or unknown
// token, or anyone else's press, is acknowledged with a notice and changes nothing.
func (r *runner) answerApproval(ctx context.Context, in Inbound) {
	a := in.Approval
	if a == nil {
		return
	}
	pr, _ := r.ad.(Prompter)
	ack := func(notice string) {
		if pr != nil && a.AckID != "" {
			_ = pr.AckApproval(ctx, *a, notice)
		}
	}
	r.mu.Lock()
	p := r.approvals[a.Token]
	r.mu.Unlock()
	switch {
	case p == nil:
		ack("This request is no longer waiting.")
	case in.Sender == "" || in.Sender != p.requester:
		r.c.o.Logger.Warn("channel approval pressed by someone else; ignored", "channel", r.id(), "sender", in.Sender)
		ack("Only the person who asked may answer.")
	case a.Decision != DecisionAllowOnce && a.Decision != DecisionRejectOnce:
		ack("Unknown answer.")
	default:
		select {
		case p.answer <- a.Decision:
			if a.Decision == DecisionAllowOnce {
				ack("Approved.")
			} else {
				ack("Denied.")
			}
		default:
			ack("Already answered.")
		}
	}
}
