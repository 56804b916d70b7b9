package engine

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// The untrusted-input guard ([sop] untrusted_input_guard, untrusted_guard_sensitivity): trigger text from
// outside (every source but manual) is scanned for prompt-injection shapes in six families, each with a weight
// (upstream's prompt guard). "block" refuses the event (BlockedUnsafe) when the heaviest family found outweighs
// the sensitivity; "warn" logs what it found and lets it through; "sanitize" also removes chat-template tokens.
// The payload reaches a step framed as data either way.

type guardFamily struct {
	name     string
	weight   float64
	patterns []*regexp.Regexp
}

func res(ss ...string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(ss))
	for i, s := range ss {
		out[i] = regexp.MustCompile(`(?i)` + s)
	}
	return out
}

// guardFamilies are compiled on the first scan, not at every start of the daemon.
var guardFamilies = sync.OnceValue(func() []guardFamily {
	return []guardFamily{
		{"system_prompt_override", 1.0, res(
			`ignore\s+((all\s+)?(previous|above|prior)|all)\s+(instructions?|prompts?|commands?)`,
			`disregard\s+(previous|all|above|prior)`, `forget\s+(previous|all|everything|above)`,
			`new\s+(instructions?|rules?|system\s+prompt)`, `override\s+(system|instructions?|rules?)`,
			`reset\s+(instructions?|context|system)`)},
		{"secret_extraction", 0.95, res(
			`(list|show|print|display|reveal|tell\s+me)\s+(all\s+)?(secrets?|credentials?|passwords?|tokens?|keys?)`,
			`(what|show)\s+(are|is|me)\s+(all\s+)?(your|the)\s+(api\s+)?(keys?|secrets?|credentials?)`,
			`contents?\s+of\s+(vault|secrets?|credentials?)`, `(dump|export)\s+(vault|secrets?|credentials?)`)},
		{"role_confusion", 0.9, res(
			`(you\s+are\s+now|act\s+as|pretend\s+(you're|to\s+be))\b`, `(your\s+new\s+role|you\s+have\s+become|you\s+must\s+be)`,
			`from\s+now\s+on\s+(you\s+are|act\s+as|pretend)`, `(assistant|ai|system|model):\s*\[?(system|override|new\s+role)`)},
		{"jailbreak_attempt", 0.85, res(
			`\bDAN\b.*mode`, `do\s+anything\s+now`, `(enter|enable)\s+(developer|debug|admin)\s+mode`,
			`in\s+this\s+hypothetical`, `imagine\s+you\s+(have\s+no|don't\s+have)\s+(restrictions?|rules?|limits?)`,
			`decode\s+(this|the\s+following)\s+(base64|hex|rot13)`)},
	}
})

// chatTokens are chat-template control tokens a payload has no business carrying.
var chatTokens = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<\|[a-z_]{2,32}\|>|\[/?INST\]|<</?SYS>>`) })

// scanUntrusted returns the families found in text and the heaviest weight among them.
func scanUntrusted(text string) (found []string, max float64) {
	for _, f := range guardFamilies() {
		for _, p := range f.patterns {
			if p.MatchString(text) {
				found = append(found, f.name)
				max = maxf(max, f.weight)
				break
			}
		}
	}
	if (strings.Contains(text, "tool_calls") || strings.Contains(text, "function_call")) &&
		(strings.Contains(text, `{"type":`) || strings.Contains(text, `{"name":`)) {
		found = append(found, "tool_call_injection")
		max = maxf(max, 0.8)
	}
	for _, m := range []string{"$(", "`", ">/dev/", "2>&1"} {
		if strings.Contains(text, m) {
			found = append(found, "command_injection")
			max = maxf(max, 0.6)
			break
		}
	}
	return found, max
}

func maxf(a, b float64) float64 {
	if a > b {
		return a
	}
	return b
}

// screen applies the guard to an event from outside; blocked says why it is refused ("" = admitted). The
// event's text is sanitized in place under "sanitize".
func (e *Engine) screen(ev *Event) (blocked string) {
	if ev.Source == "manual" {
		return ""
	}
	var text strings.Builder
	if ev.Topic != nil {
		text.WriteString(*ev.Topic + "\n")
	}
	if ev.Payload != nil {
		text.WriteString(*ev.Payload)
	}
	found, max := scanUntrusted(text.String())
	switch e.set.InputGuard {
	case "block":
		if len(found) > 0 && max > e.set.GuardSensitivity {
			return fmt.Sprintf("Potential prompt injection detected (%s)", strings.Join(found, ", "))
		}
	case "sanitize":
		clean := func(s *string) *string {
			if s == nil {
				return nil
			}
			c := chatTokens().ReplaceAllString(*s, "[REMOVED_SPECIAL_TOKEN]")
			return &c
		}
		ev.Topic, ev.Payload = clean(ev.Topic), clean(ev.Payload)
	}
	if len(found) > 0 {
		e.log.Warn("sop trigger payload looks like a prompt injection; it reaches the steps framed as data",
			"source", ev.Source, "patterns", strings.Join(found, ","))
	}
	return ""
}
