package router_test

import (
	"context"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
)

type allocPeer struct{ grants map[string]bool }

type emptyParams struct{}

type oneParam struct {
	SessionID string `json:"session_id"`
}

var cannedResult = &struct{ OK bool }{true}

// Dispatching a method allocates nothing for a method without params whose handler returns a shared pointer
// (status's shape), and twice for one whose params are one string (the params struct and the string). The
// counts are deterministic, so they keep the router's per-request work from growing unnoticed.
func TestDispatchAllocs(t *testing.T) {
	tab := router.New(router.Options[*allocPeer]{
		Authorize: func(_ context.Context, p *allocPeer, grant string) error {
			if grant != "" && !p.grants[grant] {
				return jsonrpc.NewError(-32012, "Forbidden", nil)
			}
			return nil
		},
	})
	tab.Register("status", router.Handle("status:read", func(context.Context, *allocPeer, *emptyParams) (*struct{ OK bool }, error) {
		return cannedResult, nil
	}))
	var seen string
	tab.Register("session/state", router.Handle("", func(_ context.Context, _ *allocPeer, p *oneParam) (*struct{ OK bool }, error) {
		seen = p.SessionID
		return cannedResult, nil
	}))
	peer := &allocPeer{grants: map[string]bool{"status:read": true}}
	ctx := context.Background()
	for _, tc := range []struct {
		frame string
		max   float64
	}{
		{`{"jsonrpc":"2.0","method":"status","id":1}`, 0},
		{`{"jsonrpc":"2.0","method":"session/state","params":{"session_id":"abc"},"id":2}`, 2},
	} {
		in := jsonrpc.Classify([]byte(tc.frame))
		if in.Request == nil {
			t.Fatalf("%s is not a request", tc.frame)
		}
		const runs = 200
		reqs := make([]jsonrpc.Request, runs+1) // a fresh copy each run (Dispatch releases the params), made beforehand
		for i := range reqs {
			reqs[i] = *in.Request
		}
		next := 0
		allocs := testing.AllocsPerRun(runs, func() {
			r := &reqs[next]
			next++
			res, err := tab.Dispatch(ctx, peer, r)
			if err != nil || res != any(cannedResult) {
				t.Fatalf("%s: %v %v", tc.frame, res, err)
			}
		})
		t.Logf("%s: %.1f allocations", tc.frame, allocs)
		if allocs > tc.max {
			t.Errorf("%s: Dispatch allocates %.1f times, want at most %.0f", tc.frame, allocs, tc.max)
		}
	}
	if seen != "abc" {
		t.Fatalf("params decoded as %q", seen)
	}
}
