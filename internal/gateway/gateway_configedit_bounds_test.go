package gateway_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// A PATCH of more ops than config/patch accepts is refused before any op is planned: each op of the plan is a
// config/list lookup, so a body of thousands of ops on distinct paths (within the body bound) would otherwise
// cost thousands of lookups before config/patch refuses the count. The refusal names the bound; an op that
// would fail planning past it is never looked at; config.toml is untouched.
func TestConfigPatchOpCountBoundFirst(t *testing.T) {
	t.Parallel()
	d, g, code := rpctest.StartGateway(t, rpctest.GatewayConfig)
	auth := rpctest.PairOnce(t, g, code)
	cfgPath := filepath.Join(d.ConfigDir, "config.toml")
	before := readConfig(t, cfgPath)
	var ops []map[string]any
	for i := range 300 {
		ops = append(ops, map[string]any{"op": "replace", "path": fmt.Sprintf("/providers/models/p%d/x/model", i), "value": "m"})
	}
	ops = append(ops, map[string]any{"op": "move", "path": "/gateway/port"})
	r := g.Do("PATCH", "/api/config", ops, auth, jsonCT).Want(t, 400)
	if msg, _ := r.Body["message"].(string); !strings.Contains(msg, "at most 256") || !strings.Contains(msg, "301") {
		t.Fatalf("a patch of 301 ops: %s, want refused by the op count, naming the bound and the count", r.Raw)
	}
	if after := readConfig(t, cfgPath); after != before {
		t.Fatalf("a refused patch changed config.toml:\n%s", after)
	}
}
