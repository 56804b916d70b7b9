package gateway

import (
	"net/http"
	"time"
)

// channelEntry is one row of GET /api/channels: upstream's fields (name, type, alias, owning_agent, enabled,
// compiled, status, message_count, last_message_at, health, readiness), then ours (state, last_error,
// restarts, last_progress_at, counts).
type channelEntry struct {
	Name           string         `json:"name"`
	Type           string         `json:"type"`
	Alias          string         `json:"alias"`
	OwningAgent    *string        `json:"owning_agent"`
	Enabled        bool           `json:"enabled"`
	Compiled       bool           `json:"compiled"`
	Status         string         `json:"status"`
	MessageCount   int            `json:"message_count"`
	LastMessageAt  *time.Time     `json:"last_message_at"`
	Health         string         `json:"health"`
	Readiness      map[string]any `json:"readiness"`
	State          string         `json:"state"`
	LastError      string         `json:"last_error,omitempty"`
	Restarts       int            `json:"restarts"`
	Ignored        int            `json:"ignored"`
	LastProgressAt *time.Time     `json:"last_progress_at,omitempty"`
	Counts         map[string]int `json:"counts"`
}

// channelList is GET /api/channels: every running chat channel's state, last event and error.
func (s *Server) channelList(w http.ResponseWriter, r *http.Request, _ caller) error {
	out := []channelEntry{}
	for _, c := range s.o.Daemon.Channels(r.Context()) {
		e := channelEntry{Name: c.ID, Type: c.Type, Alias: c.Alias, Enabled: true, Compiled: true, Status: "active",
			Health: "healthy", State: c.State, LastError: c.LastError, Restarts: c.Restarts, Ignored: c.Ignored, Counts: c.Counts,
			LastMessageAt: c.LastEventAt, LastProgressAt: c.LastProgressAt, MessageCount: c.Counts["event:answered"],
			Readiness: map[string]any{"listening": c.Healthy}}
		if c.Agent != "" {
			a := c.Agent
			e.OwningAgent = &a
		}
		if !c.Healthy {
			e.Status, e.Health = "error", "unhealthy"
		}
		if e.Counts == nil {
			e.Counts = map[string]int{}
		}
		out = append(out, e)
	}
	writeJSON(w, http.StatusOK, map[string]any{"channels": out})
	return nil
}
