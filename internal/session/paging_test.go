package session

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// session/list without a limit answers a first page of api.DefaultSessionListLimit rows with has_more and
// next_offset; following next_offset reaches every session exactly once; a limit above the maximum is the
// maximum; a negative offset is refused.
func TestListPages(t *testing.T) {
	e := newEnv(t, nil)
	ctx := t.Context()
	const n = 250
	t0 := time.Unix(1_700_000_000, 0)
	for i := range n {
		if _, _, err := e.chat.EnsureSession(ctx, fmt.Sprintf("rpc_p%03d", i), "default", "", t0.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	first, err := e.m.List(ctx, admin, api.SessionListParams{})
	if err != nil || len(first.Sessions) != api.DefaultSessionListLimit || !first.HasMore || first.NextOffset != api.DefaultSessionListLimit {
		t.Fatalf("first page: %d rows, has_more %v, next_offset %d, %v", len(first.Sessions), first.HasMore, first.NextOffset, err)
	}
	if first.Sessions[0].SessionID != "p249" {
		t.Fatalf("first row %s, want the most recent p249", first.Sessions[0].SessionID)
	}
	seen := map[string]bool{}
	pages := 0
	for p := first; ; {
		pages++
		for _, s := range p.Sessions {
			if seen[s.SessionID] {
				t.Fatalf("%s listed twice", s.SessionID)
			}
			seen[s.SessionID] = true
		}
		if !p.HasMore {
			break
		}
		if p, err = e.m.List(ctx, admin, api.SessionListParams{Offset: p.NextOffset}); err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != n || pages != 3 {
		t.Fatalf("%d sessions in %d pages, want %d in 3", len(seen), pages, n)
	}
	all, err := e.m.List(ctx, admin, api.SessionListParams{Limit: 1 << 30})
	if err != nil || len(all.Sessions) != n || all.HasMore {
		t.Fatalf("limit above the maximum: %d rows, has_more %v, %v", len(all.Sessions), all.HasMore, err)
	}
	if _, err := e.m.List(ctx, admin, api.SessionListParams{Offset: -1}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("negative offset = %v", err)
	}
}

// session/messages without a limit answers the newest api.DefaultSessionMessagesLimit messages, with start and
// has_older leading to the rest (upstream's markers).
func TestMessagesDefaultPage(t *testing.T) {
	e := newEnv(t, nil)
	ctx := t.Context()
	const n = 450
	t0 := time.Unix(1_700_000_000, 0)
	if _, _, err := e.chat.EnsureSession(ctx, "rpc_long", "default", "", t0); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := e.chat.Append(ctx, "rpc_long", "user", fmt.Sprintf("m%d", i), t0); err != nil {
			t.Fatal(err)
		}
	}
	page, err := e.m.Messages(ctx, admin, api.SessionMessagesParams{SessionID: "long"})
	if err != nil || len(page.Messages) != api.DefaultSessionMessagesLimit || page.Total != n || page.Start != n-api.DefaultSessionMessagesLimit || !page.HasOlder {
		t.Fatalf("default page: %d messages, total %d, start %d, has_older %v, %v", len(page.Messages), page.Total, page.Start, page.HasOlder, err)
	}
	got := len(page.Messages)
	for page.HasOlder {
		before := page.Start
		if page, err = e.m.Messages(ctx, admin, api.SessionMessagesParams{SessionID: "long", BeforeIndex: &before}); err != nil {
			t.Fatal(err)
		}
		got += len(page.Messages)
	}
	if got != n || page.Messages[0].Content != "m0" {
		t.Fatalf("paged %d messages, want %d ending at m0", got, n)
	}
	big, err := e.m.Messages(ctx, admin, api.SessionMessagesParams{SessionID: "long", Limit: 1 << 30})
	if err != nil || len(big.Messages) != min(n, api.MaxSessionMessagesLimit) {
		t.Fatalf("limit above the maximum: %d messages, %v", len(big.Messages), err)
	}
}
