package channel

import (
	"context"
	"errors"
	"time"
)

// ID names one configured channel instance: [channels.<Type>.<Alias>].
type ID struct {
	Type  string // telegram, mqtt, irc, email, discord, slack, matrix, ...
	Alias string // the instance's key under its type ("default" is the usual one)
}

// String is the composite id, <type>.<alias> (upstream's channel_id, and the health component's suffix).
func (id ID) String() string { return id.Type + "." + id.Alias }

// ParseID reads "<type>.<alias>" or a bare "<type>" (Alias "").
func ParseID(s string) ID {
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			return ID{Type: s[:i], Alias: s[i+1:]}
		}
	}
	return ID{Type: s}
}

// InboundKind says what an inbound event is.
type InboundKind string

const (
	// KindMessage is a chat message: text for the agent.
	KindMessage InboundKind = "message"
	// KindApproval is an answer to an approval prompt (a button press, a reply by convention).
	KindApproval InboundKind = "approval"
)

// Inbound is one platform event handed to the core. EventID is the platform's own id for the event (Telegram's
// update_id, an email Message-ID, a Matrix event id): unique per channel, it is what makes a redelivery
// recognisable across restarts. Every field is attacker input.
type Inbound struct {
	EventID string
	Kind    InboundKind
	// Sender is the platform user id of whoever sent it; SenderName its handle (@username) when known. Either
	// may match a peer group's external_peers.
	Sender, SenderName string
	// ReplyTarget is where an answer goes (a chat id, a room, an address); Thread a thread within it.
	ReplyTarget, Thread string
	// MessageID is the platform id of the inbound message itself (replies can quote it).
	MessageID string
	Text      string
	// Group reports a multi-user chat (a group, a channel room), as opposed to a direct message.
	Group bool
	// Approval is set for KindApproval.
	Approval *ApprovalAnswer
	// At is when the platform says the event happened (zero: unknown).
	At time.Time
}

// ApprovalAnswer is a pressed approval button (or an equivalent reply).
type ApprovalAnswer struct {
	// Token identifies the prompt: the value the core put in ApprovalPrompt.Token, echoed back by the platform.
	Token string
	// Decision is allow_once, allow_always or reject_once (api decisions).
	Decision string
	// AckID is the platform's handle for acknowledging the press (Telegram's callback_query id); "" if none.
	AckID string
}

// Outbound is one message the core asks an adapter to send: already within the adapter's Limits.
type Outbound struct {
	ReplyTarget, Thread string
	// ReplyTo is the inbound MessageID being answered ("" : none).
	ReplyTo string
	Text    string
	// Key is the core's durable id of this message (unique per channel); an adapter that can check whether a
	// message was sent (SentChecker) may carry it to the platform.
	Key string
}

// Sent is what a platform said about a sent message.
type Sent struct {
	MessageID string // the platform's id of the sent message
}

// Limits describes a platform's message size.
type Limits struct {
	// MaxRunes is the longest text one message may carry, in Unicode code points (Telegram 4096, Discord 2000).
	// 0: no limit.
	MaxRunes int
}

// Deliverer is the core as an adapter sees it.
type Deliverer interface {
	// Deliver hands one inbound event to the core and returns once the event is durably recorded (or known to
	// be a redelivery). Only after a nil return may the adapter acknowledge the event to its platform or advance
	// its offset; an error means it was not recorded, and the adapter must not acknowledge it. Deliver does not
	// wait for the turn the event starts.
	Deliver(ctx context.Context, ev Inbound) error
	// Progress tells the core the adapter is alive: a poll returned, a heartbeat was acknowledged. An adapter
	// calls it at least once per successful round trip with its platform, events or not.
	Progress()
}

// Adapter is one running channel instance. The core owns it: it calls Run under its supervisor (restarting it
// with backoff when it returns an error) and Send from its delivery workers, concurrently with Run.
type Adapter interface {
	// ID is the instance's id.
	ID() ID
	// Run receives events until ctx is done, calling d.Deliver for each and d.Progress on every round trip. It
	// returns nil only when ctx is done; any other return is a failure the supervisor restarts after a backoff,
	// except an error wrapping ErrPermanent (a revoked token, a bad config), which parks the channel until the
	// config changes.
	Run(ctx context.Context, d Deliverer) error
	// Send sends one message. Errors wrapping ErrPermanent are not retried; a *RetryAfter says when to retry.
	Send(ctx context.Context, m Outbound) (Sent, error)
	// Limits is the platform's message size limit.
	Limits() Limits
}

// Typer is an adapter whose platform shows a typing indicator. The core calls Typing every few seconds while a
// turn runs; failures are ignored.
type Typer interface {
	Typing(ctx context.Context, replyTarget, thread string) error
}

// ApprovalPrompt is one question about a tool call, put to the chat the turn came from.
type ApprovalPrompt struct {
	ReplyTarget, Thread string
	// Token is bound to the exact tool call (its request id); the adapter puts it in the buttons it shows, and
	// the platform echoes it in the ApprovalAnswer.
	Token string
	// Text says which tool would run with which arguments (already shortened and escaped for display).
	Text string
}

// Prompter is an adapter that can show an approval prompt with buttons (or an equivalent convention) and
// acknowledge an answer.
type Prompter interface {
	// Prompt shows p; it returns the platform's id of the prompt message.
	Prompt(ctx context.Context, p ApprovalPrompt) (Sent, error)
	// AckApproval acknowledges an answer (Telegram's answerCallbackQuery) with a short notice for the presser.
	AckApproval(ctx context.Context, a ApprovalAnswer, notice string) error
}

// SentChecker is an adapter whose platform can say whether a message the core recorded as about to be sent was
// in fact sent (a crash between sending and recording the platform's answer). Without one, such a message is
// not sent again: it is counted and reported as unconfirmed.
type SentChecker interface {
	// WasSent reports whether m reached the platform, and its platform id when it did.
	WasSent(ctx context.Context, m Outbound) (sent bool, s Sent, err error)
}

// Errors an adapter returns to steer the core.
var (
	// ErrPermanent marks a failure retrying cannot fix (a bad token, a forbidden chat).
	ErrPermanent = errors.New("channel: permanent failure")
)

// RetryAfter is a platform's "too many requests: retry after" answer.
type RetryAfter struct {
	After time.Duration
	Err   error
}

func (e *RetryAfter) Error() string {
	return "channel: rate limited, retry after " + e.After.String() + ": " + e.Err.Error()
}
func (e *RetryAfter) Unwrap() error { return e.Err }
