package api

import "time"

// ChannelStatus is one configured chat channel's state (health component channel:<type>.<alias>, GET
// /api/channels, doctor). Counts are the durable delivery counts: "event:<state>" (received, running,
// answered) and "out:<state>" (pending, sending, sent, unconfirmed, failed); out:unconfirmed counts replies a
// crash left undecided on a platform that cannot say whether they arrived. Warnings are config problems that
// leave the channel deaf.
// ChannelBrief is one chat channel in status.channels: its id and state (running, backoff, parked, stale),
// without the durable counts (status answers without reading a database).
type ChannelBrief struct {
	ID    string `json:"id"`
	State string `json:"state"`
}

type ChannelStatus struct {
	ID             string         `json:"id"`
	Type           string         `json:"type"`
	Alias          string         `json:"alias"`
	Agent          string         `json:"agent,omitempty"`
	State          string         `json:"state"`
	Healthy        bool           `json:"healthy"`
	LastEventAt    *time.Time     `json:"last_event_at,omitempty"`
	LastProgressAt *time.Time     `json:"last_progress_at,omitempty"`
	LastError      string         `json:"last_error,omitempty"`
	Restarts       int            `json:"restarts"`
	Ignored        int            `json:"ignored"`
	Counts         map[string]int `json:"counts,omitempty"`
	Warnings       []string       `json:"warnings,omitempty"`
}
