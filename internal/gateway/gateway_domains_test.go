package gateway_test

import (
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// The cron, memory, cost and logs mirrors reach the same domains as the socket methods.
func TestGatewayDomainRoutes(t *testing.T) {
	t.Parallel()
	_, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig)
	auth := rpctest.PairOnce(t, g, code)

	job := g.Do("POST", "/api/cron", map[string]any{"agent": "default", "schedule": "0 * * * *", "command": "echo hi", "name": "hourly"}, auth).Want(t, 200)
	id, _ := job.Body["id"].(string)
	if id == "" {
		t.Fatalf("cron add %s", job.Raw)
	}
	list := g.Do("GET", "/api/cron", nil, auth).Want(t, 200)
	if !strings.Contains(string(list.Raw), id) {
		t.Fatalf("cron list %s", list.Raw)
	}
	// The listing pages through the query: a second job, a page of one, then the next page.
	second := g.Do("POST", "/api/cron", map[string]any{"agent": "default", "schedule": "30 * * * *", "command": "echo two"}, auth).Want(t, 200)
	page := g.Do("GET", "/api/cron?limit=1", nil, auth).Want(t, 200)
	if jobs, _ := page.Body["jobs"].([]any); len(jobs) != 1 || page.Body["has_more"] != true || page.Body["next_offset"] != float64(1) {
		t.Fatalf("GET /api/cron?limit=1: %s, want one job with has_more and next_offset 1", page.Raw)
	}
	page = g.Do("GET", "/api/cron?limit=1&offset=1", nil, auth).Want(t, 200)
	if jobs, _ := page.Body["jobs"].([]any); len(jobs) != 1 || page.Body["has_more"] != nil {
		t.Fatalf("GET /api/cron?limit=1&offset=1: %s, want the last job without has_more", page.Raw)
	}
	g.Do("GET", "/api/cron?limit=-1", nil, auth).Want(t, 400)
	g.Do("DELETE", "/api/cron/"+second.Body["id"].(string), nil, auth).Want(t, 200)
	g.Do("GET", "/api/cron/"+id+"/runs?limit=5", nil, auth).Want(t, 200)
	g.Do("PATCH", "/api/cron/"+id, map[string]any{"name": "renamed"}, auth).Want(t, 200)
	if !strings.Contains(string(g.Do("GET", "/api/cron", nil, auth).Raw), "renamed") {
		t.Fatal("cron patch not applied")
	}
	g.Do("DELETE", "/api/cron/"+id, nil, auth).Want(t, 200)
	g.Do("DELETE", "/api/cron/"+id, nil, auth).Want(t, 404)
	g.Do("POST", "/api/cron", "not json", auth).Want(t, 400)

	r := g.Do("POST", "/api/memory", map[string]any{"key": "color", "content": "the user likes teal", "agent": "default"}, auth).Want(t, 200)
	if r.Body["status"] != "ok" {
		t.Fatalf("memory store %s", r.Raw)
	}
	if l := g.Do("GET", "/api/memory?agent=default", nil, auth).Want(t, 200); !strings.Contains(string(l.Raw), "teal") {
		t.Fatalf("memory list %s", l.Raw)
	}
	if s := g.Do("GET", "/api/memory?query=teal&agent=default", nil, auth).Want(t, 200); !strings.Contains(string(s.Raw), "color") {
		t.Fatalf("memory search %s", s.Raw)
	}
	g.Do("DELETE", "/api/memory/color?agent=default", nil, auth).Want(t, 200)
	if l := g.Do("GET", "/api/memory?agent=default", nil, auth).Want(t, 200); strings.Contains(string(l.Raw), "teal") {
		t.Fatalf("memory after delete %s", l.Raw)
	}

	cost := g.Do("GET", "/api/cost", nil, auth).Want(t, 200)
	if c, ok := cost.Body["cost"].(map[string]any); !ok || c["request_count"] == nil {
		t.Fatalf("cost %s", cost.Raw)
	}
	logs := g.Do("GET", "/api/logs?category=system", nil, auth).Want(t, 200)
	if _, ok := logs.Body["events"]; !ok {
		t.Fatalf("logs %s", logs.Raw)
	}
}
