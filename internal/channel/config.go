package channel

import (
	"slices"
	"strings"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// Instance is one enabled channel as the core runs it: the parts every adapter shares, read from config, and
// the adapter's own typed settings.
type Instance struct {
	ID ID
	// Agent is the agent that answers on this channel ("" : none; its events are recorded and dropped).
	Agent string
	// ExcludedTools are never offered in this channel's turns.
	ExcludedTools []string
	// ApprovalTimeout is how long an approval prompt waits (timeout: deny).
	ApprovalTimeout time.Duration
	// Peers decides who may talk to the agent here.
	Peers Peers
	// Settings is the adapter's typed config entry (config.TelegramConfig for telegram, ...), compared on
	// reload to decide whether the adapter restarts.
	Settings any
}

// Globals are [channels]' settings shared by every channel.
type Globals struct {
	MessageTimeout          time.Duration
	MaxConcurrentPerChannel int
	InitialBackoff          time.Duration // [reliability] channel_initial_backoff_secs (2 s)
	MaxBackoff              time.Duration // [reliability] channel_max_backoff_secs (60 s)
}

// GlobalsOf reads [channels] from cfg, with upstream's floors (a turn gets at least 30 s).
func GlobalsOf(cfg *config.Config) Globals {
	g := Globals{MessageTimeout: time.Duration(max(cfg.Channels.MessageTimeoutSecs, 30)) * time.Second,
		MaxConcurrentPerChannel: max(cfg.Channels.MaxConcurrentPerChannel, 1),
		InitialBackoff:          2 * time.Second, MaxBackoff: 60 * time.Second}
	return g
}

// Peers is the allow-list of one channel, from the peer groups naming it (upstream's peer_groups: empty
// external_peers is nobody, "*" anyone). Matching ignores a leading '@' and case.
type Peers struct {
	allow, ignore []string
	anyone        bool
}

// Allowed reports whether a sender (by id or handle) may talk to the agent.
func (p Peers) Allowed(sender, handle string) bool {
	for _, who := range []string{sender, handle} {
		if who != "" && slices.Contains(p.ignore, norm(who)) {
			return false
		}
	}
	if p.anyone {
		return sender != "" || handle != ""
	}
	for _, who := range []string{sender, handle} {
		if who != "" && slices.Contains(p.allow, norm(who)) {
			return true
		}
	}
	return false
}

func norm(s string) string { return strings.ToLower(strings.TrimPrefix(strings.TrimSpace(s), "@")) }

// PeersOf collects the peer groups of cfg that apply to id and include agent.
func PeersOf(cfg *config.Config, id ID, agent string) Peers {
	var p Peers
	for _, name := range sortedKeys(cfg.PeerGroups) {
		g := cfg.PeerGroups[name]
		if g.Channel != id.Type && g.Channel != id.String() {
			continue
		}
		if len(g.Agents) > 0 && !slices.Contains(g.Agents, agent) {
			continue
		}
		for _, e := range g.ExternalPeers {
			if strings.TrimSpace(e) == "*" {
				p.anyone = true
			} else if n := norm(e); n != "" {
				p.allow = append(p.allow, n)
			}
		}
		for _, e := range g.Ignore {
			if n := norm(e); n != "" {
				p.ignore = append(p.ignore, n)
			}
		}
	}
	return p
}

// OwnerOf is the agent answering on id (upstream's AgentRouter): the enabled agent listing "<type>.<alias>",
// else one listing the bare "<type>"; when no agent lists any channel, defaultAgent owns every channel. ""
// when an owner is named but disabled, or nobody owns it.
func OwnerOf(cfg *config.Config, id ID, defaultAgent string) string {
	anyBinding := false
	exact, byType := "", ""
	for _, alias := range sortedKeys(cfg.Agents) {
		a := cfg.Agents[alias]
		for _, c := range a.Channels {
			anyBinding = true
			if !a.IsEnabled() {
				continue
			}
			switch {
			case c == id.String() && exact == "":
				exact = alias
			case c == id.Type && byType == "":
				byType = alias
			}
		}
	}
	switch {
	case exact != "":
		return exact
	case byType != "":
		return byType
	case !anyBinding:
		return defaultAgent
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
