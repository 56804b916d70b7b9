package channel

import "context"

// Notifier sends one text to a named channel target, outside any conversation (a heartbeat's dead-man alert, a
// SOP notice). target is "<type>[.<alias>]:<recipient>" (the shape of sop's request_route); the text is split
// per the platform's limit and recorded like any reply.
type Notifier interface {
	Notify(ctx context.Context, target, text string) error
}

// ParseTarget splits "<type>[.<alias>]:<recipient>" into the channel and the recipient; ok is false when the
// target has no recipient or no type.
func ParseTarget(target string) (id ID, recipient string, ok bool) {
	for i := 0; i < len(target); i++ {
		if target[i] == ':' {
			id, recipient = ParseID(target[:i]), target[i+1:]
			return id, recipient, id.Type != "" && recipient != ""
		}
	}
	return ID{}, "", false
}
