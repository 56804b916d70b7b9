package doctor_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/doctor"
)

// Each running channel is a finding: a parked one an error naming its error, a deaf config and replies left
// unconfirmed warnings, a healthy one ok.
func TestChannelFindings(t *testing.T) {
	l := newInstall(t)
	chans := []api.ChannelStatus{
		{ID: "telegram.a", State: "parked", LastError: "telegram getUpdates: 401 Unauthorized (check bot_token)"},
		{ID: "telegram.b", State: "running", Healthy: true, Warnings: []string{"no peer group lets anyone talk to the agent here"}},
		{ID: "telegram.c", State: "running", Healthy: true, Counts: map[string]int{"out:unconfirmed": 2, "event:answered": 9}},
		{ID: "telegram.d", State: "running", Healthy: true, Counts: map[string]int{"event:answered": 3}},
	}
	res := doctor.Run(context.Background(), doctor.Options{Layout: l, Endpoint: l.SocketPath(), ProbeTimeout: 2 * time.Second,
		SkipProviders: true, Channels: func(context.Context) []api.ChannelStatus { return chans }})
	if d := find(t, res, "channel-telegram.a"); d.Severity != api.SeverityError || !strings.Contains(d.Message, "bot_token") {
		t.Fatalf("parked: %+v", d)
	}
	if d := find(t, res, "channel-telegram.b"); d.Severity != api.SeverityWarn || !strings.Contains(d.Message, "peer group") {
		t.Fatalf("deaf: %+v", d)
	}
	if d := find(t, res, "channel-telegram.c"); d.Severity != api.SeverityWarn || !strings.Contains(d.Message, "2 repl") {
		t.Fatalf("unconfirmed: %+v", d)
	}
	if d := find(t, res, "channel-telegram.d"); d.Severity != api.SeverityOK {
		t.Fatalf("healthy: %+v", d)
	}
}
