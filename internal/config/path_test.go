package config

import (
	"errors"
	"fmt"
	"testing"
)

func TestResolve(t *testing.T) {
	r, err := normalize("rpc.max-frame-bytes")
	if err != nil || r.path.String() != "rpc.max_frame_bytes" || !r.leaf || r.secret {
		t.Fatalf("resolve = %+v, %v", r, err)
	}
	r, err = normalize("agents.my-agent.workspace.path")
	if err != nil || r.path.String() != "agents.my-agent.workspace.path" {
		t.Fatalf("map key translated: %+v, %v", r, err)
	}
	r, err = normalize("providers.models.openai.default.extra_headers.X-Org")
	if err != nil || !r.secret || !r.leaf {
		t.Fatalf("extra header: %+v, %v", r, err)
	}
	if r, _ := normalize("gateway.paired_tokens"); !r.secret {
		t.Fatal("paired_tokens not secret")
	}
	for _, bad := range []string{"nope", "gateway.port.x", "providers.models.gemini.x.model", "users.a.uid.b"} {
		if _, err := normalize(bad); !errors.Is(err, ErrUnknownProp) {
			t.Errorf("normalize(%q) err = %v", bad, err)
		}
	}
}

// Patterns are property paths with "*" (one segment) and a last "**" (any depth); matching grants to methods
// and paths is internal/auth's, tested there.
func TestPatternMatch(t *testing.T) {
	cases := []struct {
		pattern, prop string
		want          bool
	}{
		{"agents.*.system_prompt", "agents.a.system_prompt", true},
		{"agents.*.system_prompt", "agents.a.risk_profile", false},
		{"agents.*.system_prompt", "agents.a.b.system_prompt", false},
		{"agents.*", "agents", false},
		{"agents.**", "agents.a.workspace.path", true},
		{"agents.**", "agents", true},
		{"agents.**", "users.a.uid", false},
		{"**", "gateway.port", true},
		{"gateway", "gateway.port", false},
		{"gateway.port", "gateway.port", true},
		{`providers.models.openai."gpt-4.1".*`, `providers.models.openai."gpt-4.1".model`, true},
		{`providers.models.openai."gpt-4.1".*`, `providers.models.openai.gpt-4.model`, false},
	}
	for _, c := range cases {
		pat, err := ParsePattern(c.pattern)
		if err != nil {
			t.Fatalf("ParsePattern(%q): %v", c.pattern, err)
		}
		p, err := ParsePath(c.prop)
		if err != nil {
			t.Fatal(err)
		}
		if got := pat.Match(p); got != c.want {
			t.Errorf("%q matches %q = %v", c.pattern, c.prop, got)
		}
	}
	for _, bad := range []string{"", "agents.**.x", "**.a", `a."b`, "a..b", "agents."} {
		if _, err := ParsePattern(bad); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("ParsePattern(%q) err = %v", bad, err)
		}
	}
}

// A malformed config:update pattern is refused when the config is loaded; other grants are opaque names.
func TestCheckGrant(t *testing.T) {
	for g, want := range map[string]string{
		"sessions:create":              "",
		"sessions:delete:only-mine":    "",
		"config:update":                "",
		"config:update:agents.**":      "",
		"config:update:agents.*.model": "",
		"":                             "empty grant",
		"  ":                           "empty grant",
		"config:update:":               `bad pattern ""`,
		`config:update:a."b`:           `bad pattern "a.\"b"`,
		"config:update:agents.**.x":    `pattern "agents.**.x": ** must be the last segment`,
	} {
		err := checkGrant(g)
		if got := fmt.Sprint(err); (want == "" && err != nil) || (want != "" && got != want) {
			t.Errorf("checkGrant(%q) = %v, want %q", g, err, want)
		}
	}
}

func TestSecretNames(t *testing.T) {
	for name, want := range map[string]bool{
		"api_key": true, "bot_token": true, "paired_tokens": true, "client_secret": true, "password": true,
		"extra_headers": true, "env": true, "max_tokens": false, "model": false, "uri": false, "timeout_secs": false,
	} {
		if got := isSecretName(name); got != want {
			t.Errorf("isSecretName(%q) = %v, want %v", name, got, want)
		}
	}
}
