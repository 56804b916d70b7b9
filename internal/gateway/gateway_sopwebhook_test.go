package gateway_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/rpctest"
)

// webhookSopConfig runs the SOP runtime with a webhook secret and a device profile that may only read SOP runs.
const webhookSopConfig = rpctest.GatewayConfig + `
[gateway]
webhook_secret = "s3cret"

[sop]
sops_dir = "shared/sops"

[permission_profiles.sopwatch]
grants = ["sops:read"]
`

// startWebhookSop starts a daemon whose install holds the auto SOP "deploy" with the webhook trigger
// path = "/deploy" and a condition on the payload; it returns the gateway client and the owner's bearer.
func startWebhookSop(t *testing.T) (*rpctest.Daemon, *rpctest.Gateway, string) {
	t.Helper()
	cfgDir := filepath.Join(rpctest.ShortTempDir(t), "install")
	dir := filepath.Join(cfgDir, "shared", "sops", "deploy")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"SOP.toml": "[sop]\nname = \"deploy\"\ndescription = \"Ship\"\nexecution_mode = \"auto\"\nmax_concurrent = 4\n\n[[triggers]]\ntype = \"webhook\"\npath = \"/deploy\"\n",
		"SOP.md":   "## Steps\n\n1. **Ship** — Say it shipped.\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var banner rpctest.SyncBuf
	d := rpctest.StartOn(t, cfgDir, rpctest.WithBanner(&banner), rpctest.WithConfig(webhookSopConfig))
	g := rpctest.NewGateway(t, d.GatewayURL(t))
	m := rpctest.BannerCode.FindStringSubmatch(banner.String())
	if m == nil {
		t.Fatalf("no pairing code in %q", banner.String())
	}
	return d, g, rpctest.PairOnce(t, g, m[1])
}

// POST /sop/webhook/{path}: the SOP whose webhook path matches starts and is driven to completed; the payload
// reaches the step as data; a redelivery with the same X-Idempotency-Key admits no second run; a wrong
// secret, a device without sops:execute, a body that is not JSON, an unknown path each get their own answer.
func TestSopWebhookTrigger(t *testing.T) {
	t.Parallel()
	d, g, owner := startWebhookSop(t)
	const ct, secret = "Content-Type: application/json", "X-Webhook-Secret: s3cret"
	body := map[string]any{"version": "1.2.3"}

	g.Do("POST", "/sop/webhook/deploy", body, owner, ct).Want(t, 401)
	g.Do("POST", "/sop/webhook/deploy", body, owner, ct, "X-Webhook-Secret: wrong").Want(t, 401)
	watcher := rpctest.PairWithProfile(t, d, g, "sopwatch")
	g.Do("POST", "/sop/webhook/deploy", body, watcher, ct, secret).Want(t, 403)
	g.Do("POST", "/sop/webhook/nowhere", body, owner, ct, secret).Want(t, 404)
	bad := g.Do("POST", "/sop/webhook/deploy", "not json {", owner, ct, secret)
	if bad.Code != 400 {
		t.Fatalf("a non-JSON body: %d %s", bad.Code, bad.Raw)
	}

	// Hostile sizes: a path or an idempotency key past their bounds (the body has every route's 64 KiB limit,
	// withBodyLimit, tested in gateway_test.go).
	g.Do("POST", "/sop/webhook/"+strings.Repeat("p", 600), body, owner, ct, secret).Want(t, 400)
	g.Do("POST", "/sop/webhook/deploy", body, owner, ct, secret, "X-Idempotency-Key: "+strings.Repeat("k", 200)).Want(t, 400)

	r := g.Do("POST", "/sop/webhook/deploy", body, owner, ct, secret, "X-Idempotency-Key: delivery-1").Want(t, 202)
	results, _ := r.Body["results"].([]any)
	if r.Body["path"] != "/deploy" || len(results) != 1 {
		t.Fatalf("webhook answer %v", r.Body)
	}
	first := results[0].(map[string]any)
	id, _ := first["run_id"].(string)
	if first["sop_name"] != "deploy" || first["result"] != "started" || id == "" {
		t.Fatalf("first delivery %v", first)
	}
	again := g.Do("POST", "/sop/webhook/deploy", body, owner, ct, secret, "X-Idempotency-Key: delivery-1").Want(t, 202)
	dup := again.Body["results"].([]any)[0].(map[string]any)
	if dup["result"] != "coalesced" || dup["run_id"] != id {
		t.Fatalf("redelivery %v, want coalesced into %s", dup, id)
	}

	c := d.Dial(t)
	c.Initialize()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c.Request("sops/run-get", map[string]any{"run_id": id}, 2)
		res := c.Result(2)
		run, _ := res["run"].(map[string]any)
		if run == nil {
			run = res
		}
		if run["status"] == "completed" {
			ev := run["trigger_event"].(map[string]any)
			if ev["source"] != "webhook" || ev["topic"] != "/deploy" || ev["payload"] != `{"version":"1.2.3"}` {
				t.Fatalf("trigger_event %v", ev)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("webhook run never completed: %v", run)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The refused deliveries and the redelivery started nothing: one run in all.
	c.Request("sops/runs", map[string]any{"sop": "deploy"}, 3)
	if runs := c.Result(3)["runs"].([]any); len(runs) != 1 {
		t.Fatalf("runs of deploy: %v", runs)
	}
}
