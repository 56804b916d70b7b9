package daemon

import (
	"context"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/heartbeat"
)

type recordNotify struct{ targets, texts []string }

func (r *recordNotify) Notify(_ context.Context, target, text string) error {
	r.targets, r.texts = append(r.targets, target), append(r.texts, text)
	return nil
}

// The heartbeat's alerts go through the chat channels to "<type>:<recipient>", the target shape of
// channel.ParseTarget; a notifier given in Options wins; none at all stays nil.
func TestHeartbeatNotifierThroughChannels(t *testing.T) {
	rec := &recordNotify{}
	n := heartbeatNotifier(nil, rec)
	if err := n.Send(context.Background(), heartbeat.Target{Channel: "telegram", To: "42"}, "⚠️ alert"); err != nil {
		t.Fatal(err)
	}
	if len(rec.targets) != 1 || rec.targets[0] != "telegram:42" || rec.texts[0] != "⚠️ alert" {
		t.Fatalf("notified %q %q", rec.targets, rec.texts)
	}
	if id, to, ok := channel.ParseTarget(rec.targets[0]); !ok || id.Type != "telegram" || to != "42" {
		t.Fatalf("ParseTarget(%q) = %+v %q %v", rec.targets[0], id, to, ok)
	}
	if heartbeatNotifier(nil, nil) != nil {
		t.Fatal("a notifier without channels")
	}
	own := channelNotifier{rec}
	if heartbeatNotifier(own, &recordNotify{}) != own {
		t.Fatal("the Options notifier did not win")
	}
}

func TestHeartbeatProblemNamesOnlyHeartbeat(t *testing.T) {
	got := heartbeatProblem([]config.Problem{{Path: "agents.x.model_provider", Message: "no"},
		{Path: "heartbeat.agent", Message: "must reference a configured agent when heartbeat.enabled = true"}})
	if got != "heartbeat.agent: must reference a configured agent when heartbeat.enabled = true" {
		t.Fatalf("problem = %q", got)
	}
}
