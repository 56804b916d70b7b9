package session

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/agent"
)

// Messages of one chat arriving while its turn runs queue behind it on the same session: the first turn's end
// must not close the session under them (they failed with "session: not found" when it did), and the last one
// out closes it.
func TestRunChannelTurnsQueuedOnOneSessionAllRun(t *testing.T) {
	e := newEnv(t, nil)
	const id = "irc_local_alice_alice"
	entered, release := make(chan struct{}), make(chan struct{})
	type res struct {
		out string
		err error
	}
	first := make(chan res, 1)
	go func() {
		out, err := e.m.RunChannel(t.Context(), ChannelTurn{Agent: "default", SessionID: id, Prompt: `/tool shell {"command":"true"}`,
			Approve: func(ctx context.Context, _ agent.ApprovalRequest) (agent.ApprovalDecision, error) {
				close(entered)
				<-release
				return agent.ApprovalDecision{Decision: "reject_once"}, nil
			}})
		first <- res{out, err}
	}()
	<-entered
	var wg sync.WaitGroup
	later := make([]res, 2)
	for i, p := range []string{"second", "third"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := e.m.RunChannel(t.Context(), ChannelTurn{Agent: "default", SessionID: id, Prompt: p})
			later[i] = res{out, err}
		}()
	}
	// Both wait for the turn lock: the live session, the running turn and the two queued use it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		e.m.mu.Lock()
		refs := 0
		if s := e.m.sessions[id]; s != nil {
			refs = s.lock.refs
		}
		e.m.mu.Unlock()
		if refs == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the later turns never queued (lock refs %d)", refs)
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	if r := <-first; r.err != nil {
		t.Fatalf("first turn: %q, %v", r.out, r.err)
	}
	wg.Wait()
	for i, want := range []string{"second", "third"} {
		if later[i].err != nil || later[i].out != want {
			t.Errorf("queued turn %d = %q, %v; want %q", i, later[i].out, later[i].err, want)
		}
	}
	if ids := e.m.ActiveIDs(); len(ids) != 0 {
		t.Fatalf("the channel session is still live after its last turn: %v", ids)
	}
}
