package api

import "encoding/json"

// Log methods (upstream's logs/*; live feed per protocol.md §6.2.1).
const (
	MethodLogsQuery       = "logs/query"
	MethodLogsGet         = "logs/get"
	MethodLogsSubscribe   = "logs/subscribe"
	MethodLogsUnsubscribe = "logs/unsubscribe"
	// NotifyLogsEvent carries one event: the event's own fields plus subscription_id and seq.
	NotifyLogsEvent = "logs/event"
	// NotifySubscriptionLagged names a range of sequence numbers a subscriber will not get.
	NotifySubscriptionLagged = "subscription/lagged"
)

// LogsQueryParams are upstream's logs/query filters and cursors.
type LogsQueryParams struct {
	SinceTS         string `json:"since_ts,omitempty"`
	UntilTS         string `json:"until_ts,omitempty"`
	UntilID         string `json:"until_id,omitempty"`
	UntilLineOffset *int64 `json:"until_line_offset,omitempty"`
	SeverityMin     *int   `json:"severity_min,omitempty"`
	Q               string `json:"q,omitempty"`
	Category        string `json:"category,omitempty"`
	Action          string `json:"action,omitempty"`
	Outcome         string `json:"outcome,omitempty"`
	TraceID         string `json:"trace_id,omitempty"`
	HideInternal    bool   `json:"hide_internal,omitempty"`
	Limit           *int   `json:"limit,omitempty"`
	// AgentAlias and SessionKey filter on the event's attribution (ours; upstream's reader has field_eq).
	AgentAlias string `json:"agent_alias,omitempty"`
	SessionKey string `json:"session_key,omitempty"`
}

// LogsQueryResult is one page, newest first. NextCursor is the legacy [timestamp, id] cursor.
type LogsQueryResult struct {
	Events               []json.RawMessage `json:"events"`
	NextCursor           *[2]string        `json:"next_cursor"`
	NextCursorLineOffset *uint64           `json:"next_cursor_line_offset"`
	AtEnd                bool              `json:"at_end"`
}

// LogsGetParams names one event.
type LogsGetParams struct {
	ID string `json:"id"`
}

// LogsGetResult is the full event.
type LogsGetResult struct {
	Event json.RawMessage `json:"event"`
}

// LogsSubscribeParams resume a feed: since_seq is the last sequence number seen, epoch the one it belongs to.
type LogsSubscribeParams struct {
	SinceSeq *uint64 `json:"since_seq,omitempty"`
	Epoch    string  `json:"epoch,omitempty"`
}

// LogsSubscribeResult is upstream's {subscribed} plus the feed's identity; seq is the last sequence number
// published so far.
type LogsSubscribeResult struct {
	Subscribed     bool   `json:"subscribed"`
	SubscriptionID string `json:"subscription_id"`
	Epoch          string `json:"epoch"`
	Seq            uint64 `json:"seq"`
}

// LogsUnsubscribeParams name a subscription of this connection.
type LogsUnsubscribeParams struct {
	SubscriptionID string `json:"subscription_id"`
}

// LogsUnsubscribeResult says whether the subscription existed.
type LogsUnsubscribeResult struct {
	Unsubscribed bool `json:"unsubscribed"`
}

// SubscriptionLagged is the subscription/lagged notification: the frames from_seq up to (not including)
// resume_seq will not be delivered.
type SubscriptionLagged struct {
	SubscriptionID string `json:"subscription_id"`
	FromSeq        uint64 `json:"from_seq"`
	ResumeSeq      uint64 `json:"resume_seq"`
	EpochChanged   bool   `json:"epoch_changed"`
}
