package config

import (
	"strings"
	"testing"
)

// [acp] max_sessions and session_timeout_secs (upstream's keys): our defaults when absent, the values given
// when set, and a value that would make the session manager unusable is refused naming the key.
func TestACPSessionLimits(t *testing.T) {
	cfg, _, err := LoadBytes("config.toml", []byte("schema_version = 3\n"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ACP.MaxSessions != DefaultACPMaxSessions || cfg.ACP.SessionTimeoutSecs != DefaultACPSessionTimeoutSecs {
		t.Fatalf("defaults: %+v", cfg.ACP)
	}
	cfg, _, err = LoadBytes("config.toml", []byte("schema_version = 3\n[acp]\nmax_sessions = 1000\nsession_timeout_secs = 3600\n"), nil, nil)
	if err != nil || cfg.ACP.MaxSessions != 1000 || cfg.ACP.SessionTimeoutSecs != 3600 {
		t.Fatalf("set: %+v, %v", cfg.ACP, err)
	}
	for _, bad := range []struct{ toml, key string }{
		{"max_sessions = 0", "acp.max_sessions"},
		{"max_sessions = 100001", "acp.max_sessions"},
		{"session_timeout_secs = 0", "acp.session_timeout_secs"},
	} {
		_, _, err := LoadBytes("config.toml", []byte("schema_version = 3\n[acp]\n"+bad.toml+"\n"), nil, nil)
		if err == nil || !strings.Contains(err.Error(), bad.key) {
			t.Errorf("%s: %v, want an error naming %s", bad.toml, err, bad.key)
		}
	}
}
