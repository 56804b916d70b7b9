package session

import (
	"errors"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunUnattended(t *testing.T) {
	e := newEnv(t, nil)
	out, err := e.m.RunUnattended(t.Context(), Unattended{Agent: "default", SessionID: "cron-1", Prompt: "summarise the day"})
	if err != nil || out != "summarise the day" {
		t.Fatalf("RunUnattended = %q, %v", out, err)
	}
	if ids := e.m.ActiveIDs(); len(ids) != 0 {
		t.Fatalf("the session it opened is still live: %v", ids)
	}
	if meta, err := e.chat.Meta(t.Context(), store.RPCKey("cron-1")); err != nil || meta.Owner != UnattendedPrincipal || meta.MessageCount != 2 {
		t.Fatalf("stored session %+v, %v", meta, err)
	}

	// Under supervised, shell is asked about in a turn: unattended, nobody can approve, so it is refused at once
	// (no wait for the approval timeout) and the command never runs.
	out, err = e.m.RunUnattended(t.Context(), Unattended{Agent: "default", SessionID: "cron-2",
		Prompt: `/tool shell {"command":"touch made-it"}`})
	if err != nil || !strings.Contains(out, "tool shell returned") || !strings.Contains(out, "approv") {
		t.Fatalf("RunUnattended(shell) = %q, %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(e.workspace(), "made-it")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("an unapproved command ran")
	}

	// Excluded tools are not offered.
	out, _ = e.m.RunUnattended(t.Context(), Unattended{Agent: "default", SessionID: "cron-3",
		Prompt: `/tool time {}`, ExcludedTools: []string{"time"}})
	if !strings.Contains(out, "not offered") {
		t.Fatalf("excluded tool ran: %q", out)
	}
}
