package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// sseFrame is one frame of an event stream: its event name ("" for data), data, and whether a keep-alive
// comment came between it and the frame before.
type sseFrame struct {
	event, data string
	afterLook   bool
}

// openApprovalStream opens GET /api/approvals/events as auth and returns its frames as they arrive (the
// channel closes when the stream ends) and the status.
func openApprovalStream(t *testing.T, base, auth string) (<-chan sseFrame, int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/approvals/events", nil)
	k, v, _ := strings.Cut(auth, ": ")
	req.Header.Set(k, v)
	res, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		res.Body.Close()
		return nil, res.StatusCode
	}
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	out := make(chan sseFrame, 64)
	go func() {
		defer close(out)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		var f sseFrame
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if f.data != "" {
					out <- f
					f = sseFrame{}
				}
			case strings.HasPrefix(line, ": keep-alive"):
				f.afterLook = true
			case strings.HasPrefix(line, "event: "):
				f.event = line[len("event: "):]
			case strings.HasPrefix(line, "data: "):
				f.data = line[len("data: "):]
			}
		}
	}()
	return out, 200
}

// nextList is the next frame's approvals (failing when the stream ends first or 60 s pass: on this shared
// machine a change is pushed well within it).
func nextList(t *testing.T, frames <-chan sseFrame, what string) ([]map[string]any, sseFrame) {
	t.Helper()
	select {
	case f, ok := <-frames:
		if !ok {
			t.Fatalf("%s: the stream ended", what)
		}
		var body struct {
			Approvals []map[string]any `json:"approvals"`
		}
		if f.event == "" {
			if err := json.Unmarshal([]byte(f.data), &body); err != nil {
				t.Fatalf("%s: frame %q: %v", what, f.data, err)
			}
		}
		return body.Approvals, f
	case <-time.After(60 * time.Second):
		t.Fatalf("%s: no frame arrived", what)
	}
	return nil, sseFrame{}
}

// The Approvals page's push (GET /api/approvals/events): the stream opens with the caller's list, and a tool
// call asked in another connection's turn is pushed by the session manager's signal (no keep-alive look
// between: not found by polling), its answer pushes the empty list; a device's stream never carries another
// device's approvals; a device without sessions:read or sops:read is refused before the stream starts
// (403, as GET /api/approvals); a revoked device's stream ends with an error frame at the next change.
func TestApprovalsEventsPush(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, approvalsConfig)
	owner := rpctest.PairOnce(t, g, code)
	before := deviceIDs(t, g, owner)
	alice := rpctest.PairWithProfile(t, d, g, "chatter")
	var aliceID string
	for id := range deviceIDs(t, g, owner) {
		if !before[id] {
			aliceID = id
		}
	}
	bob := rpctest.PairWithProfile(t, d, g, "chatter")
	viewer := rpctest.PairWithProfile(t, d, g, "viewer")
	base := d.GatewayURL(t)

	if _, st := openApprovalStream(t, base, viewer); st != 403 {
		t.Fatalf("a viewer's stream: %d, want 403", st)
	}
	if _, st := openApprovalStream(t, base, "X-None: x"); st != 401 {
		t.Fatalf("no token: %d, want 401", st)
	}
	af, _ := openApprovalStream(t, base, alice)
	bf, _ := openApprovalStream(t, base, bob)
	if got, _ := nextList(t, af, "alice's first frame"); len(got) != 0 {
		t.Fatalf("alice's stream opens with %v", got)
	}
	if got, _ := nextList(t, bf, "bob's first frame"); len(got) != 0 {
		t.Fatalf("bob's stream opens with %v", got)
	}

	w, sid, rid := askShell(t, base, alice, "pushed.txt")
	got, f := nextList(t, af, "alice's approval pushed")
	if len(got) != 1 || got[0]["session_id"] != sid || got[0]["request_id"] != rid {
		t.Fatalf("pushed %v", got)
	}
	if f.afterLook {
		t.Fatal("the approval came after a keep-alive look, not pushed by its change")
	}
	// Bob's own approval is pushed to him; alice's never is.
	bw, bsid, _ := askShell(t, base, bob, "bob.txt")
	for {
		got, _ := nextList(t, bf, "bob's approval pushed")
		for _, a := range got {
			if a["session_id"] == sid {
				t.Fatalf("bob's stream carries alice's approval: %v", got)
			}
		}
		if len(got) == 1 && got[0]["session_id"] == bsid {
			break
		}
	}
	// Alice's stream: bob's approval changed the manager's set but not her list; nothing is sent for it.
	// The owner answers alice's call: her stream pushes the empty list.
	g.Do("POST", "/api/approvals/"+got[0]["id"].(string), map[string]any{"decision": "reject"}, owner, "Content-Type: application/json").Want(t, 200)
	w.Until("done")
	if got, f := nextList(t, af, "the answer pushed"); len(got) != 0 || f.afterLook {
		t.Fatalf("after the answer alice's stream has %v (after a look: %v)", got, f.afterLook)
	}

	// Alice's device is revoked: at the next change her stream ends with an error frame.
	g.Do("DELETE", "/api/devices/"+aliceID, nil, owner).Want(t, 200)
	g.Do("POST", "/api/approvals/"+firstID(t, g, bob), map[string]any{"decision": "reject"}, bob, "Content-Type: application/json").Want(t, 200)
	bw.Until("done")
	for {
		f, ok := <-af
		if !ok {
			t.Fatal("the revoked device's stream ended without an error frame")
		}
		if f.event == "error" {
			break
		}
		var body struct {
			Approvals []any `json:"approvals"`
		}
		if json.Unmarshal([]byte(f.data), &body) == nil && len(body.Approvals) > 0 {
			t.Fatalf("the revoked device was sent %s", f.data)
		}
	}
	if _, ok := <-af; ok {
		t.Fatal("the revoked device's stream goes on after its error frame")
	}
}

func deviceIDs(t *testing.T, g *rpctest.Gateway, owner string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, d := range g.Do("GET", "/api/devices", nil, owner).Want(t, 200).Body["devices"].([]any) {
		out[d.(map[string]any)["id"].(string)] = true
	}
	return out
}

func firstID(t *testing.T, g *rpctest.Gateway, auth string) string {
	t.Helper()
	got, _ := listApprovals(t, g, auth)
	if len(got) == 0 {
		t.Fatal("nothing listed")
	}
	return got[0]["id"].(string)
}
