package config

import "testing"

// Upstream's defaults: an empty [risk_profiles.x] table is valid and safe (supervised, confined to the
// workspace), so a profile a migration only names (risk_profiles.default) works as it did upstream.
func TestEmptyRiskProfileDefaultsToSupervisedWorkspaceOnly(t *testing.T) {
	path := writeConfig(t, `schema_version = 3

[providers.models.echo.default]
model = "echo"

[agents.default]
model_provider = "echo.default"
risk_profile = "x"

[risk_profiles.x]
`)
	cfg, _, err := Load(path, nil)
	if err != nil {
		t.Fatalf("an empty risk profile is refused: %v", err)
	}
	rp := cfg.RiskProfiles["x"]
	if rp.Level != LevelSupervised || !rp.WorkspaceOnly || rp.ApprovalTimeoutSecs != 120 {
		t.Fatalf("risk_profiles.x = %+v; want level supervised, workspace_only true, approval_timeout_secs 120", rp)
	}
	// Explicit values still win.
	path = writeConfig(t, "schema_version = 3\n[risk_profiles.y]\nlevel = \"full\"\nworkspace_only = false\n")
	cfg, _, err = Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rp := cfg.RiskProfiles["y"]; rp.Level != LevelFull || rp.WorkspaceOnly {
		t.Fatalf("risk_profiles.y = %+v", rp)
	}
}
