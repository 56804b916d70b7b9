package agent

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
)

// AppendLast stores only the answer of a turn that ends without tools; a failure there fails the turn as a
// failed Append does.
func TestAppendLastStoresOnlyTheFinalAnswer(t *testing.T) {
	h := newHarness(t)
	tr := h.turn(echoProvider(t), tools.Policy{Level: tools.LevelFull}, nil)
	var viaLast, viaAppend []string
	store := journalOf(tr).append
	journalOf(tr).append = func(ctx context.Context, role, content string) error {
		viaAppend = append(viaAppend, role)
		return store(ctx, role, content)
	}
	journalOf(tr).appendLast = func(ctx context.Context, role, content string) error {
		viaLast = append(viaLast, role+":"+content)
		return store(ctx, role, content)
	}
	if outcome, _, err := tr.Run(t.Context(), "hi there"); err != nil || outcome != api.OutcomeCompleted {
		t.Fatalf("Run = %q, %v", outcome, err)
	}
	if len(viaLast) != 1 || viaLast[0] != "assistant:hi there" || len(viaAppend) != 1 || viaAppend[0] != "user" {
		t.Fatalf("AppendLast got %q, Append got %q", viaLast, viaAppend)
	}
	if rows := h.rows(); len(rows) != 2 {
		t.Fatalf("rows = %+v", rows)
	}

	h2 := newHarness(t)
	tr = h2.turn(echoProvider(t), tools.Policy{Level: tools.LevelFull}, nil)
	journalOf(tr).appendLast = func(context.Context, string, string) error { return errors.New("disk full") }
	outcome, _, err := tr.Run(t.Context(), "hi")
	if outcome != api.OutcomeFailed || err == nil || !strings.Contains(err.Error(), "store answer") {
		t.Fatalf("Run with a failing AppendLast = %q, %v", outcome, err)
	}
}
