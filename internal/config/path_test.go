package config

import (
	"errors"
	"reflect"
	"testing"
	"unicode/utf8"
)

func TestParsePath(t *testing.T) {
	good := map[string]Path{
		"users.example.uid":                       {"users", "example", "uid"},
		`providers.models.openai."gpt-4.1".model`: {"providers", "models", "openai", "gpt-4.1", "model"},
		`a."q\"uote\\d".b`:                        {"a", `q"uote\d`, "b"},
		`"".x`:                                    {"", "x"},
		"rpc.max-frame-bytes":                     {"rpc", "max-frame-bytes"},
	}
	for in, want := range good {
		got, err := ParsePath(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParsePath(%q) = %q, %v", in, got, err)
		}
		if got.String() != in {
			t.Errorf("String() = %q, want %q", got.String(), in)
		}
	}
	for _, bad := range []string{"", "a..b", "a.", ".a", `a."b`, `a."b"c`, "a b", `a.b\c`, `"a\x"`} {
		if _, err := ParsePath(bad); !errors.Is(err, ErrInvalidPath) {
			t.Errorf("ParsePath(%q) err = %v", bad, err)
		}
	}
}

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

func TestGrantAllows(t *testing.T) {
	cases := []struct {
		grants []string
		grant  string
		prop   string
		want   bool
	}{
		{[]string{"admin"}, "config:update", "gateway.port", true},
		{[]string{"admin"}, "sessions:create", "", true},
		{[]string{"config:update"}, "config:update", "users.x.uid", true},
		{[]string{"config:read"}, "config:update", "users.x.uid", false},
		{[]string{"config:update:agents.*.system_prompt"}, "config:update", "agents.a.system_prompt", true},
		{[]string{"config:update:agents.*.system_prompt"}, "config:update", "agents.a.risk_profile", false},
		{[]string{"config:update:agents.*.system_prompt"}, "config:update", "agents.a.b.system_prompt", false},
		{[]string{"config:update:agents.**"}, "config:update", "agents.a.workspace.path", true},
		{[]string{"config:update:agents.**"}, "config:update", "users.a.uid", false},
		{[]string{`config:update:providers.models.openai."gpt-4.1".*`}, "config:update", `providers.models.openai."gpt-4.1".model`, true},
		{[]string{"config:update:agents.**"}, "config:update", "", true},
		{[]string{"sessions:create"}, "sessions:create", "", true},
		{[]string{"sessions:create"}, "sessions:execute", "", false},
		{nil, "config:update", "a", false},
	}
	for _, c := range cases {
		if got := GrantAllows(c.grants, c.grant, c.prop); got != c.want {
			t.Errorf("GrantAllows(%v, %q, %q) = %v", c.grants, c.grant, c.prop, got)
		}
	}
}

func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"users.example.uid", `providers.models.openai."gpt-4.1".model`, `a."\\\"".b`, `""`, "a..b", "é.ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePath(s)
		if err != nil {
			return
		}
		q, err := ParsePath(p.String())
		if err != nil || !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip %q -> %q -> %q, %v", s, p.String(), q, err)
		}
	})
}

func FuzzFormatPath(f *testing.F) {
	f.Add("users", "ex.ample", "uid")
	f.Add("", "\"\\", " x ")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		p := Path{a, b, c}
		if !utf8.ValidString(p.String()) {
			return
		}
		q, err := ParsePath(p.String())
		if err != nil || !reflect.DeepEqual(p, q) {
			t.Fatalf("parse(format(%q)) = %q, %v", p, q, err)
		}
	})
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
