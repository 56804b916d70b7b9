package rpctest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// status hides the install's paths from a principal that is not an admin. This sweeps every method of the
// wire contract the same way, over the real socket, as a [users] local user whose profile holds every read
// grant (and doctor:run) but not admin: no result and no error may name where the install lives.
func TestRestrictedUserSeesNoInstallPathAnyMethod(t *testing.T) {
	cfg := fmt.Sprintf(`%s
[permission_profiles.reader]
grants = ["status:read", "health:read", "tui:read", "sessions:read", "files:read", "config:read", "memory:read",
  "cron:read", "heartbeat:read", "devices:read", "skills:read", "personality:read", "sops:read", "cost:read",
  "logs:read", "doctor:run", "locales:fetch"]

[users.alice]
uid = %d
permission_profiles = ["reader"]
`, baseConfig, os.Getuid())
	d := Start(t, WithConfig(cfg))
	root := filepath.Dir(d.ConfigDir)
	c := &zc{Client: d.Dial(t), t: t}
	res := c.call("initialize", map[string]any{"protocol_version": 1})
	if strings.Contains(string(res), root) {
		t.Errorf("initialize names the install %s to alice: %.400s", root, res)
	}
	var st struct {
		ConfigDir string `json:"config_dir"`
		PID       int    `json:"pid"`
	}
	if err := json.Unmarshal(c.call("status", map[string]any{}), &st); err != nil || st.ConfigDir != "" || st.PID == 0 {
		t.Fatalf("alice's status: %+v %v: she is not the restricted user this sweep needs", st, err)
	}
	methods := apiMethods(t)
	if len(methods) < 50 {
		t.Fatalf("found %d methods in internal/api: the scan is broken", len(methods))
	}
	for _, m := range methods {
		if m == "initialize" || m == "shutdown" || strings.HasSuffix(m, "/stop") {
			continue
		}
		res, werr := c.tryCall(m, map[string]any{})
		raw := string(res)
		if werr != nil {
			b, _ := json.Marshal(werr)
			raw = string(b)
		}
		if strings.Contains(raw, root) {
			t.Errorf("%s names the install %s to a restricted local user: %.400s", m, root, raw)
		}
	}
}

// apiMethods lists the method names internal/api declares (Method... = "name").
func apiMethods(t *testing.T) []string {
	files, _ := filepath.Glob("../api/*.go")
	re := regexp.MustCompile(`(?m)^\s*Method[A-Za-z0-9]*\s*=\s*"([^"]+)"`)
	seen := map[string]bool{}
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			if !seen[m[1]] {
				seen[m[1]] = true
				out = append(out, m[1])
			}
		}
	}
	return out
}
