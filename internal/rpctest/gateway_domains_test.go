package rpctest

import (
	"strings"
	"testing"
)

// The cron, memory, cost and logs mirrors reach the same domains as the socket methods.
func TestGatewayDomainRoutes(t *testing.T) {
	_, g, code := startGateway(t, gwBaseConfig)
	auth := pairOnce(t, g, code)

	job := g.do("POST", "/api/cron", map[string]any{"agent": "default", "schedule": "0 * * * *", "command": "echo hi", "name": "hourly"}, auth).want(t, 200)
	id, _ := job.body["id"].(string)
	if id == "" {
		t.Fatalf("cron add %s", job.raw)
	}
	list := g.do("GET", "/api/cron", nil, auth).want(t, 200)
	if !strings.Contains(string(list.raw), id) {
		t.Fatalf("cron list %s", list.raw)
	}
	g.do("GET", "/api/cron/"+id+"/runs?limit=5", nil, auth).want(t, 200)
	g.do("PATCH", "/api/cron/"+id, map[string]any{"name": "renamed"}, auth).want(t, 200)
	if !strings.Contains(string(g.do("GET", "/api/cron", nil, auth).raw), "renamed") {
		t.Fatal("cron patch not applied")
	}
	g.do("DELETE", "/api/cron/"+id, nil, auth).want(t, 200)
	g.do("DELETE", "/api/cron/"+id, nil, auth).want(t, 404)
	g.do("POST", "/api/cron", "not json", auth).want(t, 400)

	r := g.do("POST", "/api/memory", map[string]any{"key": "color", "content": "the user likes teal", "agent": "default"}, auth).want(t, 200)
	if r.body["status"] != "ok" {
		t.Fatalf("memory store %s", r.raw)
	}
	if l := g.do("GET", "/api/memory?agent=default", nil, auth).want(t, 200); !strings.Contains(string(l.raw), "teal") {
		t.Fatalf("memory list %s", l.raw)
	}
	if s := g.do("GET", "/api/memory?query=teal&agent=default", nil, auth).want(t, 200); !strings.Contains(string(s.raw), "color") {
		t.Fatalf("memory search %s", s.raw)
	}
	g.do("DELETE", "/api/memory/color?agent=default", nil, auth).want(t, 200)
	if l := g.do("GET", "/api/memory?agent=default", nil, auth).want(t, 200); strings.Contains(string(l.raw), "teal") {
		t.Fatalf("memory after delete %s", l.raw)
	}

	cost := g.do("GET", "/api/cost", nil, auth).want(t, 200)
	if c, ok := cost.body["cost"].(map[string]any); !ok || c["request_count"] == nil {
		t.Fatalf("cost %s", cost.raw)
	}
	logs := g.do("GET", "/api/logs?category=system", nil, auth).want(t, 200)
	if _, ok := logs.body["events"]; !ok {
		t.Fatalf("logs %s", logs.raw)
	}
}
