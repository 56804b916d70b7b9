package api

import "encoding/json"

// The config methods behind upstream's dashboard config routes: one atomic patch, the drift of the file from
// the running config, a delete's dry run, and the schema migration.
const (
	MethodConfigPatch      = "config/patch"
	MethodConfigDrift      = "config/drift"
	MethodConfigDeletePlan = "config/delete-plan"
	MethodConfigMigrate    = "config/migrate"
)

// Ops of config/patch.
const (
	PatchOpSet     = "set"
	PatchOpDelete  = "delete"
	PatchOpComment = "comment"
	PatchOpTest    = "test"
)

// ConfigPatchOp is one op of config/patch: set prop to value, delete prop's key, only comment it, or test that
// its running value is value (checked under the config write lock; one that fails refuses the patch -32005). Comment,
// when present, is written as the `# ...` lines above the key (a set or a comment op; "" removes them).
type ConfigPatchOp struct {
	Op      string          `json:"op"`
	Prop    string          `json:"prop"`
	Value   json.RawMessage `json:"value,omitempty"`
	Comment *string         `json:"comment,omitempty"`
}

// ConfigPatchParams are the params of config/patch: every op applied in order in one atomic write, or none.
// Unless OverrideDrift, a patch writing a property that config.toml changed behind the daemon (config/drift)
// is refused -32005.
type ConfigPatchParams struct {
	Ops           []ConfigPatchOp `json:"ops"`
	OverrideDrift bool            `json:"override_drift,omitempty"`
}

// ConfigPatchResult is the result of config/patch: the canonical props written, in order, without repeats.
type ConfigPatchResult struct {
	Props []string `json:"props"`
	Saved bool     `json:"saved"`
}

// ConfigDriftEntry is one property whose running value differs from config.toml's (upstream's DriftEntry):
// a secret carries no values; a value absent on one side is not there.
type ConfigDriftEntry struct {
	Path          string `json:"path"`
	Secret        bool   `json:"secret,omitempty"`
	Drifted       bool   `json:"drifted"`
	InMemoryValue any    `json:"in_memory_value,omitempty"`
	OnDiskValue   any    `json:"on_disk_value,omitempty"`
}

// ConfigDriftResult is the result of config/drift. Error (ours) says why the file could not be compared (it
// does not parse or validate: config/reload would refuse it too); drifted is then empty.
type ConfigDriftResult struct {
	Drifted []ConfigDriftEntry `json:"drifted"`
	Error   string             `json:"error,omitempty"`
}

// ConfigDeletePlanParams are the params of config/delete-plan: the map-keyed section and the entry's key.
type ConfigDeletePlanParams struct {
	Path string `json:"path"`
	Key  string `json:"key"`
}

// ConfigRefSite is a property naming the entry a delete would remove (upstream's RefSiteDto); Message (ours)
// is the validation failure it would become.
type ConfigRefSite struct {
	Path     string `json:"path"`
	RawValue string `json:"raw_value"`
	Message  string `json:"message,omitempty"`
}

// ConfigDeletePlanResult is the result of config/delete-plan (upstream's DeletePlanResponse): allowed when
// config/map-key-delete would succeed; blockers are the references it would leave dangling. Scrubs is always
// empty and CascadesOwnedState false: our delete edits nothing but the entry and removes no agent state.
type ConfigDeletePlanResult struct {
	Path               string          `json:"path"`
	Key                string          `json:"key"`
	Allowed            bool            `json:"allowed"`
	Blockers           []ConfigRefSite `json:"blockers"`
	Scrubs             []ConfigRefSite `json:"scrubs"`
	CascadesOwnedState bool            `json:"cascades_owned_state"`
}

// ConfigMigrateResult is the result of config/migrate (upstream's MigrateResponse): migrated false when the
// file already was schema_version. BackupPath is the previous file's name next to config.toml (never a full
// path); From, Notes, Warnings and Problems (ours) are the old version, what moved, what was dropped and the
// entries that still fail validation.
type ConfigMigrateResult struct {
	Migrated      bool     `json:"migrated"`
	BackupPath    string   `json:"backup_path,omitempty"`
	SchemaVersion int      `json:"schema_version"`
	From          int      `json:"from,omitempty"`
	Notes         []string `json:"notes,omitempty"`
	Warnings      []string `json:"warnings,omitempty"`
	Problems      []string `json:"problems,omitempty"`
}
