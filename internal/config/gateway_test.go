package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The new [gateway] lists are checked at load: a paired_token_profiles entry must be <sha256>:<defined profile>,
// an allowed_origins entry an origin without a path, an allowed_hosts entry a host.
func TestGatewaySecurityKeysValidated(t *testing.T) {
	hash := strings.Repeat("ab", 32)
	cases := []struct {
		gateway, want string // want "": loads
	}{
		{`paired_token_profiles = ["` + hash + `:viewer"]`, ""},
		{`paired_token_profiles = ["` + hash + `:nope"]`, `permission profile "nope" is not defined`},
		{`paired_token_profiles = ["abc:viewer"]`, "must be <64-hex token sha256>:<profile>"},
		{`paired_token_profiles = ["` + hash + `"]`, "must be <64-hex token sha256>:<profile>"},
		{`allowed_origins = ["https://app.example", "http://x.example:3000"]`, ""},
		{`allowed_origins = ["https://app.example/"]`, "must be an origin"},
		{`allowed_origins = ["app.example"]`, "must be an origin"},
		{`allowed_hosts = ["zc.example", "zc.example:8443", "[::1]:1"]`, ""},
		{`allowed_hosts = ["http://zc.example"]`, "allowed_hosts"},
		{`allowed_hosts = ["*.example"]`, "allowed_hosts"},
	}
	for _, c := range cases {
		path := filepath.Join(t.TempDir(), "config.toml")
		raw := "schema_version = 3\n\n[permission_profiles.viewer]\ngrants = [\"status:read\"]\n\n[gateway]\n" + c.gateway + "\n"
		if err := os.WriteFile(path, []byte(raw), 0o600); err != nil {
			t.Fatal(err)
		}
		_, _, err := Load(path, nil)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.gateway, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one saying %q", c.gateway, err, c.want)
		}
	}
}
