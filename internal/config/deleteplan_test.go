package config

import (
	"errors"
	"reflect"
	"testing"
)

func TestDeletePlanMatchesTheDelete(t *testing.T) {
	m, path := openManager(t, commentedConfig+"\n[users.ann]\nuid = 1001\npermission_profiles = [\"operator\"]\n")
	before := readFile(t, path)
	cases := []struct {
		section, key string
		blockers     []string
	}{
		{"providers.models.echo", "default", []string{"agents.default.model_provider"}},
		{"risk_profiles", "supervised", []string{"agents.default.risk_profile"}},
		{"permission_profiles", "operator", []string{"users.ann.permission_profiles"}},
		{"users", "ann", nil},
	}
	for _, c := range cases {
		plan, err := m.DeletePlan(c.section, c.key)
		if err != nil {
			t.Fatalf("%s.%s: %v", c.section, c.key, err)
		}
		var got []string
		for _, b := range plan.Blockers {
			got = append(got, b.Path)
			if b.RawValue == "" || b.Message == "" {
				t.Errorf("%s.%s: blocker %+v lacks its value or reason", c.section, c.key, b)
			}
		}
		if !reflect.DeepEqual(got, c.blockers) || plan.Allowed != (len(c.blockers) == 0) || plan.Path != c.section || plan.Key != c.key {
			t.Errorf("%s.%s: plan %+v, want blockers %v", c.section, c.key, plan, c.blockers)
		}
		if readFile(t, path) != before {
			t.Fatalf("%s.%s: the plan wrote the file", c.section, c.key)
		}
	}
	if b := mustPlan(t, m, "providers.models.echo", "default").Blockers[0]; b.RawValue != "echo.default" {
		t.Errorf("raw_value = %q", b.RawValue)
	}
	// What the plan says is what the delete does: refused while a blocker stands, done when none does.
	if _, err := m.DeleteMapKey(t.Context(), "risk_profiles", "supervised", nil); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("delete the plan blocks: %v", err)
	}
	if ok, err := m.DeleteMapKey(t.Context(), "users", "ann", nil); err != nil || !ok {
		t.Fatalf("delete the plan allows: %v %v", ok, err)
	}
	if _, err := m.DeletePlan("users", "ann"); !errors.Is(err, ErrUnknownProp) {
		t.Fatalf("plan of a deleted entry: %v", err)
	}
	if _, err := m.DeletePlan("gateway", "port"); !errors.Is(err, ErrNoMapSection) {
		t.Fatalf("plan of a non-map section: %v", err)
	}
}

func mustPlan(t *testing.T, m *Manager, section, key string) DeletePlan {
	t.Helper()
	p, err := m.DeletePlan(section, key)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
