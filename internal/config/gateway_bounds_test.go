package config

import (
	"errors"
	"strings"
	"testing"
)

// The [gateway] bounds of issue 20 are validated with messages that say what is wrong, and default sanely.
func TestGatewayBoundsValidation(t *testing.T) {
	cfg, _, err := Load(writeConfig(t, string(DefaultTOML())), nil)
	if err != nil {
		t.Fatal(err)
	}
	g := cfg.Gateway
	if g.MaxConnections != 0 || g.BodyMinBytesPerSec != 1024 || g.PairingFailureBudget != 20 ||
		g.PairingFailureWindowSecs != 300 || g.MetricsRequireToken || len(g.TrustedProxies) != 0 {
		t.Fatalf("defaults %+v", g)
	}
	path := writeConfig(t, string(DefaultTOML())+`
[gateway]
require_pairing = false
max_connections = -1
body_min_bytes_per_sec = -5
trusted_proxies = ["10.0.0.0/8", "::1", "proxy.local"]
pairing_failure_budget = 0
pairing_failure_window_secs = 0
metrics_require_token = true
`)
	_, _, err = Load(path, nil)
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v", err)
	}
	got := map[string]string{}
	for _, p := range ve.Problems {
		got[p.Path] = p.Message
	}
	for path, want := range map[string]string{
		"gateway.max_connections":             "must be 0 (derived from the fd limit) or more, got -1",
		"gateway.body_min_bytes_per_sec":      "must be 0 (no rate floor) or more, got -5",
		"gateway.trusted_proxies":             `"proxy.local" is neither an IP address nor a CIDR`,
		"gateway.pairing_failure_budget":      "must be at least 1, got 0",
		"gateway.pairing_failure_window_secs": "must be at least 1, got 0",
		"gateway.metrics_require_token":       "needs gateway.require_pairing = true",
	} {
		if !strings.Contains(got[path], want) {
			t.Errorf("%s: %q, want it to say %q", path, got[path], want)
		}
	}
	if len(got) != 6 {
		t.Errorf("problems %v", ve.Problems)
	}
}
