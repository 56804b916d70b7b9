package rpctest

import (
	"strings"
	"testing"
)

// Identities are numbered per kind in order of first appearance; the same value keeps its number, a new one
// gets the next, and the kinds count separately.
func TestNormalizerNumbersIdentities(t *testing.T) {
	t.Parallel()
	n := newNormalizer("")
	steps := []struct{ frame, want string }{
		{`{"result":{"session_id":"s-a"}}`, `{"result":{"session_id":"<session_id#1>"}}`},
		{`{"result":{"session_id":"s-b"}}`, `{"result":{"session_id":"<session_id#2>"}}`},
		{`{"params":{"session_id":"s-a","request_id":"s-b"}}`, `{"params":{"request_id":"<request_id#1>","session_id":"<session_id#1>"}}`},
		{`{"result":{"session_ids":["s-c","s-b"]}}`, `{"result":{"session_ids":["<session_id#3>","<session_id#2>"]}}`},
		{`{"result":{"interrupted_turn_id":"t","turn_id":"t","tui_id":"tui_0a1b2c3d","pid":7}}`,
			`{"result":{"interrupted_turn_id":"<turn_id#1>","pid":"<pid>","tui_id":"<tui_id#1>","turn_id":"<turn_id#1>"}}`},
		{`{"result":{"tui_id":"chosen"}}`, `{"result":{"tui_id":"chosen"}}`}, // a client-chosen tui id is compared as is
	}
	for i, s := range steps {
		got, err := n.got(s.frame)
		if err != nil {
			t.Fatal(err)
		}
		if got != s.want {
			t.Fatalf("step %d: got %s, want %s", i, got, s.want)
		}
	}
	if got, err := n.resolve(`{"session_id":"<session_id#2>","request_id":"<request_id#1>"}`); err != nil || got != `{"session_id":"s-b","request_id":"s-b"}` {
		t.Fatalf("resolve: %s, %v", got, err)
	}
	if _, err := n.resolve(`{"session_id":"<session_id#4>"}`); err == nil || !strings.Contains(err.Error(), "only 3 session_id") {
		t.Fatalf("resolving an id never shown: %v", err)
	}
}

// Two new ids in one frame are numbered in key order, never in Go's random map order.
func TestNormalizerNumbersInKeyOrder(t *testing.T) {
	t.Parallel()
	for range 50 {
		n := newNormalizer("")
		got, err := n.got(`{"b":{"session_id":"second"},"a":{"session_id":"first"},"c":[{"session_id":"third"}]}`)
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"a":{"session_id":"<session_id#1>"},"b":{"session_id":"<session_id#2>"},"c":[{"session_id":"<session_id#3>"}]}`; got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
}

// twoSessions opens two sessions, names the second by its number in a send line, and checks that the daemon
// answers for that one.
const twoSessions = `> initialize
< <initialize-result>
> {"jsonrpc":"2.0","method":"session/new","params":{"session_id":"alpha"},"id":2}
< {"id":2,"jsonrpc":"2.0","result":{"agent_alias":"default","message_count":0,"session_id":"<session_id#1>","workspace_dir":"<workspace>"}}
> {"jsonrpc":"2.0","method":"session/new","params":{"session_id":"beta"},"id":3}
< {"id":3,"jsonrpc":"2.0","result":{"agent_alias":"default","message_count":0,"session_id":"<session_id#2>","workspace_dir":"<workspace>"}}
> {"jsonrpc":"2.0","method":"session/state","params":{"session_id":"<session_id#2>"},"id":4}
< {"id":4,"jsonrpc":"2.0","result":{"session_id":"<session_id#2>","state":"idle"}}
> {"jsonrpc":"2.0","method":"session/close","params":{"session_id":"alpha"},"id":5}
< {"id":5,"jsonrpc":"2.0","result":{"closed":true,"session_id":"<session_id#1>"}}
`

// The runner against the real daemon: the right numbers pass; a transcript that asserts #1 where the daemon
// showed the other session fails, and so does one that swaps the two at creation, or names an id never shown.
func TestTranscriptNumbersAgainstDaemon(t *testing.T) {
	t.Parallel()
	hs, err := loadHandshake()
	if err != nil {
		t.Fatal(err)
	}
	d := Start(t)
	if _, err := play(d.Dial(t), d.ConfigDir, twoSessions, hs, false); err != nil {
		t.Fatalf("the correct transcript failed: %v", err)
	}
	wrong := []struct {
		name, from, to, want string
	}{
		{"state names the other session", `"result":{"session_id":"<session_id#2>","state"`, `"result":{"session_id":"<session_id#1>","state"`, "8: frame mismatch"},
		{"the second session reuses #1", `"message_count":0,"session_id":"<session_id#2>"`, `"message_count":0,"session_id":"<session_id#1>"`, "6: frame mismatch"},
		{"close shows #2", `"closed":true,"session_id":"<session_id#1>"`, `"closed":true,"session_id":"<session_id#2>"`, "10: frame mismatch"},
		{"an id never shown", `"params":{"session_id":"<session_id#2>"}`, `"params":{"session_id":"<session_id#3>"}`, "7: <session_id#3>: the daemon has shown only 2"},
	}
	for _, w := range wrong {
		t.Run(w.name, func(t *testing.T) {
			src := strings.Replace(twoSessions, w.from, w.to, 1)
			if src == twoSessions {
				t.Fatalf("the edit %q did not apply", w.from)
			}
			d := Start(t) // fresh: session ids must not collide with the run above
			_, err := play(d.Dial(t), d.ConfigDir, src, hs, false)
			if err == nil || !strings.HasPrefix(err.Error(), w.want) {
				t.Fatalf("got %v, want an error starting %q", err, w.want)
			}
		})
	}
}
