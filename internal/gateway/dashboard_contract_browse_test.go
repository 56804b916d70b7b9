package gateway_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// The types of the shared/ directory changes and the event history, kept beside dashTypes (their own file so
// the config routes' table and this one change apart).
func init() {
	// lib: mkdirShared's {created}, rmdirShared's {removed}
	dashTypes["BrowseMkdirResponse"] = map[string]string{"created": "string"}
	dashTypes["BrowseRmdirResponse"] = map[string]string{"removed": "string"}
	// crates/zeroclaw-gateway/src/sse.rs history_events_payload's {events}; types: SSEEvent
	dashTypes["EventsHistoryResponse"] = map[string]string{"events": "SSEEvent[]"}
	dashTypes["SSEEvent"] = map[string]string{"type": "string", "timestamp?": "string"}
}

// The contract of POST /api/browse/mkdir, DELETE /api/browse/rmdir and GET /api/events/history, as
// TestDashboardContract's: our answers from a real daemon parse as the dashboard's types, by the Go table and
// by tsc; the answers are kept in testdata/dashboard/ (-update).
func TestDashboardContractBrowseEvents(t *testing.T) {
	t.Parallel()
	_, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig)
	auth := rpctest.PairOnce(t, g, code)
	js := "Content-Type: application/json"
	g.Do("GET", "/api/browse", nil, auth).Want(t, 200) // shared/ exists from here on
	answers := t.TempDir()
	for _, c := range []struct {
		fixture, method, path, typ string
		body                       any
	}{
		{"browse-mkdir", "POST", "/api/browse/mkdir", "BrowseMkdirResponse", map[string]any{"path": "kb/notes"}},
		{"browse-shared", "GET", "/api/browse", "BrowseResponse", nil},
		{"browse-rmdir", "DELETE", "/api/browse/rmdir", "BrowseRmdirResponse", map[string]any{"path": "kb/notes"}},
		{"events-history", "GET", "/api/events/history", "EventsHistoryResponse", nil},
	} {
		if c.fixture == "browse-shared" {
			g.Do("POST", "/api/browse/mkdir", map[string]any{"path": "skills"}, auth, js).Want(t, 200)
		}
		r := g.Do(c.method, c.path, c.body, auth, js).Want(t, 200)
		var v any
		if err := json.Unmarshal(r.Raw, &v); err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		for _, e := range conforms(c.typ, v, c.path) {
			t.Error(e)
		}
		if c.fixture == "events-history" {
			if evs, _ := v.(map[string]any)["events"].([]any); len(evs) == 0 {
				t.Fatalf("history is empty after the pairing and the config's start: %s", r.Raw)
			}
			// The fixture keeps one event: ids, timestamps and the pairing are not what the type check is for.
			v = map[string]any{"events": v.(map[string]any)["events"].([]any)[:1]}
		}
		writeFixture(t, answers, c.fixture, c.typ, v)
		if *updateFixtures {
			writeFixture(t, filepath.Join("testdata", "dashboard"), c.fixture, c.typ, v)
		}
	}
	typeCheck(t, answers)
}
