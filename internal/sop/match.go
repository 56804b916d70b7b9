package sop

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// CalendarNoShowTopic is the topic of a calendar no-show event, the only topic a calendar trigger matches.
const CalendarNoShowTopic = "calendar/no_show"

// Match reports whether trigger t fires for an event from source with topic and payload (nil: none), as
// upstream's trigger_matches: the source must equal the trigger's type, then the type's own rule applies
// (mqtt + and # wildcards, filesystem glob or directory prefix and the listed events, cron and webhook exact
// topics, manual always), then the trigger's condition is tested on the payload.
func Match(t Trigger, source Source, topic, payload *string) bool {
	if t.Type != source {
		return false
	}
	cond := func() bool {
		if t.Condition == nil {
			return true
		}
		return EvalCondition(*t.Condition, payload)
	}
	has := func() bool { return topic != nil }
	switch t.Type {
	case SourceMQTT:
		return has() && MQTTTopicMatches(t.Topic, *topic) && cond()
	case SourceAMQP:
		return has() && AMQPKeyMatches(t.RoutingKey, *topic) && cond()
	case SourceWebhook:
		return has() && *topic == t.Path
	case SourceCron:
		return has() && *topic == t.Expression
	case SourcePeripheral:
		return has() && *topic == t.Board+"/"+t.Signal && cond()
	case SourceFilesystem:
		if !has() || !FSPathMatches(t.Path, *topic) {
			return false
		}
		if len(t.Events) > 0 && !fsEventListed(t.Events, payload) {
			return false
		}
		return cond()
	case SourceCalendar:
		return calendarMatches(t, topic, payload) && cond()
	case SourceChannel:
		return has() && channelTopicMatches(t.Channel, t.Alias, *topic) && cond()
	case SourceManual:
		return true
	}
	return false
}

// MatchEvent is Match for an Event (its topic and payload are present when non-empty, as upstream's
// listeners fill them).
func MatchEvent(t Trigger, e Event) bool {
	var topic, payload *string
	if e.Topic != "" {
		topic = &e.Topic
	}
	if e.Payload != "" {
		payload = &e.Payload
	}
	if e.Source == SourceWebhook || e.Source == SourceCron {
		topic = &e.Topic
	}
	return Match(t, e.Source, topic, payload)
}

// MQTTTopicMatches matches an MQTT topic filter: "+" is one level, "#" the rest.
func MQTTTopicMatches(pattern, topic string) bool {
	p := strings.Split(pattern, "/")
	t := strings.Split(topic, "/")
	pi, ti := 0, 0
	for pi < len(p) && ti < len(t) {
		switch p[pi] {
		case "#":
			return true
		case "+":
		default:
			if p[pi] != t[ti] {
				return false
			}
		}
		pi++
		ti++
	}
	return pi == len(p) && ti == len(t)
}

// AMQPKeyMatches matches a topic-exchange routing key: "." words, "*" one word, "#" zero or more. It is a
// table walk, linear in pattern × key, so no pattern of many "#"s can make it backtrack exponentially.
func AMQPKeyMatches(pattern, key string) bool {
	pat, words := strings.Split(pattern, "."), strings.Split(key, ".")
	// ok[j]: pat[:i] matches words[:j].
	ok := make([]bool, len(words)+1)
	ok[0] = true
	for _, p := range pat {
		next := make([]bool, len(words)+1)
		for j := 0; j <= len(words); j++ {
			switch {
			case p == "#":
				next[j] = ok[j] || (j > 0 && next[j-1])
			case j > 0 && (p == "*" || p == words[j-1]):
				next[j] = ok[j-1]
			}
		}
		ok = next
	}
	return ok[len(words)]
}

// FSPathMatches matches a filesystem trigger path: a glob ("*" and "**" any run of characters, "?" one,
// "[...]" a class, as the glob crate's default options, where * also crosses "/"), or a bare directory,
// which matches itself and anything under it.
func FSPathMatches(pattern, path string) bool {
	if globMatch(pattern, path) {
		return true
	}
	prefix := strings.TrimRight(pattern, "/")
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// globMatch is an iterative wildcard matcher (linear backtracking on the last star, so no pattern is
// exponential). An invalid class matches nothing, as an invalid glob::Pattern does.
func globMatch(pattern, name string) bool {
	px, nx := 0, 0
	starP, starN := -1, -1
	for nx < len(name) || px < len(pattern) {
		if px < len(pattern) {
			switch c := pattern[px]; c {
			case '*':
				for px < len(pattern) && pattern[px] == '*' {
					px++
				}
				starP, starN = px, nx
				continue
			case '?':
				if nx < len(name) {
					_, w := utf8.DecodeRuneInString(name[nx:])
					px++
					nx += w
					continue
				}
			case '[':
				if nx < len(name) {
					r, w := utf8.DecodeRuneInString(name[nx:])
					ok, plen, valid := matchClass(pattern[px:], r)
					if !valid {
						return false
					}
					if ok {
						px += plen
						nx += w
						continue
					}
				}
			default:
				if nx < len(name) && name[nx] == c {
					px++
					nx++
					continue
				}
			}
		}
		if starP >= 0 && starN < len(name) {
			_, w := utf8.DecodeRuneInString(name[starN:])
			starN += w
			px, nx = starP, starN
			continue
		}
		return false
	}
	return true
}

// matchClass matches r against the class at the start of p ("[abc]", "[a-z]", "[!x]"), returning whether it
// matched, the class's length, and whether the class is well formed.
func matchClass(p string, r rune) (matched bool, n int, valid bool) {
	i := 1
	neg := false
	if i < len(p) && p[i] == '!' {
		neg = true
		i++
	}
	first := true
	for i < len(p) {
		if p[i] == ']' && !first {
			return matched != neg, i + 1, true
		}
		first = false
		lo, w := utf8.DecodeRuneInString(p[i:])
		i += w
		hi := lo
		if i+1 < len(p) && p[i] == '-' && p[i+1] != ']' {
			hi, w = utf8.DecodeRuneInString(p[i+1:])
			i += 1 + w
		}
		if lo <= r && r <= hi {
			matched = true
		}
	}
	return false, 0, false
}

func fsEventListed(events []FSEvent, payload *string) bool {
	if payload == nil {
		return false
	}
	var v struct {
		Event *string `json:"event"`
	}
	if json.Unmarshal([]byte(*payload), &v) != nil || v.Event == nil {
		return false
	}
	for _, e := range events {
		if string(e) == *v.Event {
			return true
		}
	}
	return false
}

func calendarMatches(t Trigger, topic, payload *string) bool {
	if topic == nil || *topic != CalendarNoShowTopic || payload == nil {
		return false
	}
	var p struct {
		CalendarSource *string `json:"calendar_source"`
		CalendarID     *string `json:"calendar_id"`
	}
	if json.Unmarshal([]byte(*payload), &p) != nil || p.CalendarSource == nil || p.CalendarID == nil {
		return false
	}
	if *p.CalendarSource != t.CalendarSource {
		return false
	}
	if len(t.CalendarIDs) == 0 {
		return true
	}
	for _, id := range t.CalendarIDs {
		if id == *p.CalendarID {
			return true
		}
	}
	return false
}

// channelTopicMatches accepts "kind", "kind/alias" and "kind.alias:event_type"; the kind compares
// case-insensitively, an aliased trigger needs that exact alias.
func channelTopicMatches(channel string, alias *string, topic string) bool {
	head, _, _ := strings.Cut(topic, ":")
	kind, talias, hasAlias := head, "", false
	if k, a, ok := strings.Cut(head, "."); ok {
		kind, talias, hasAlias = k, a, true
	} else if k, a, ok := strings.Cut(head, "/"); ok {
		kind, talias, hasAlias = k, a, true
	}
	if !strings.EqualFold(kind, channel) {
		return false
	}
	if alias == nil {
		return true
	}
	return hasAlias && talias == *alias
}

// CapUntrusted cuts an untrusted topic or payload to at most max bytes at a UTF-8 character boundary
// ([sop] untrusted_payload_max_bytes; 0 = no cap). Invalid UTF-8 is not produced by the cut.
func CapUntrusted(s string, max int) string {
	if max <= 0 || len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
