package upstream

import (
	"slices"
	"strings"
	"testing"
)

// Migrate works on a bare tree: the v1 provider globals land on an entry of a family this runtime speaks,
// the default agent is bound to it, and the result is stamped v3.
func TestMigrateTree(t *testing.T) {
	res, err := Migrate(tree{"default_provider": "groq", "api_key": "k", "default_model": "llama"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if res.Tree["schema_version"] != int64(3) {
		t.Errorf("schema_version = %#v", res.Tree["schema_version"])
	}
	providers, _ := asTree(res.Tree["providers"])
	models, _ := asTree(providers["models"])
	for typ := range models {
		if !slices.Contains(Families(), typ) {
			t.Errorf("providers.models.%s is not a family of this runtime: %v", typ, models)
		}
	}
	openai, _ := asTree(models["openai"])
	entry, _ := asTree(openai["groq"])
	if entry["api_key"] != "k" || entry["model"] != "llama" || entry["uri"] != openAICompatible["groq"] {
		t.Fatalf("providers.models.openai.groq = %v (models %v)", entry, models)
	}
	agents, _ := asTree(res.Tree["agents"])
	def, _ := asTree(agents["default"])
	if def["model_provider"] != "openai.groq" {
		t.Errorf("agents.default = %v", def)
	}
	if len(res.Notes) == 0 {
		t.Error("no notes")
	}
}

// A section of the wrong type makes a v2 file impossible to migrate.
func TestMigrateRefusesBadSections(t *testing.T) {
	if _, err := Migrate(tree{"schema_version": int64(2), "agents": "x"}, 2); err == nil ||
		!strings.Contains(err.Error(), "agents must be a table in a schema v2 config") {
		t.Fatalf("err = %v", err)
	}
}
