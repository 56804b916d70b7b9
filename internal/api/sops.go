package api

import "encoding/json"

// The SOP authoring methods (upstream/sop.md §3): they read and write <sops_dir> on disk, so they answer
// whether or not the SOP runtime runs. A Sop travels as upstream's Sop JSON (internal/sop.Sop).
const (
	MethodSopsList           = "sops/list"     // result: a bare array of Sop
	MethodSopsGet            = "sops/get"      // SopNameParams → Sop
	MethodSopsGraph          = "sops/graph"    // SopNameParams → SopGraph
	MethodSopsValidate       = "sops/validate" // SopValidateParams → SopValidateResult
	MethodSopsSave           = "sops/save"     // SopSaveParams → {saved}
	MethodSopsCreate         = "sops/create"   // SopSaveParams → {created}
	MethodSopsDelete         = "sops/delete"   // SopNameParams → {deleted}
	MethodSopsWireDraft      = "sops/wire-draft"
	MethodSopsGraphDraft     = "sops/graph-draft"
	MethodSopsTriggerSources = "sops/trigger-sources"
	// MethodSopsDiagnostics lists the SOPs that failed to load, with their file:line reasons (ours: upstream
	// only logs them).
	MethodSopsDiagnostics = "sops/diagnostics"
)

// Error codes of the SOP authoring methods (upstream's SOP_ALREADY_EXISTS and SOP_NOT_FOUND).
const (
	CodeSopAlreadyExists = -32020 // sops/create of a SOP whose directory exists
	CodeSopNotFound      = -32021 // sops/delete of a SOP that is not there
)

// SopNameParams names one SOP.
type SopNameParams struct {
	Name string `json:"name"`
}

// SopValidateParams is sops/validate: a SOP on disk by Name, or a draft Sop (which wins when present).
type SopValidateParams struct {
	Name string          `json:"name,omitempty"`
	Sop  json.RawMessage `json:"sop,omitempty"`
}

// SopValidateResult is {blocking, warnings, ok}; for a SOP on disk, Issues (ours) are the same findings as
// "file:line: error|warning: message".
type SopValidateResult struct {
	Blocking []string `json:"blocking"`
	Warnings []string `json:"warnings"`
	OK       bool     `json:"ok"`
	Issues   []string `json:"issues,omitempty"`
}

// SopSaveParams is sops/save and sops/create: the Sop, and for save the name it was loaded as (a rename
// is refused).
type SopSaveParams struct {
	Sop          json.RawMessage `json:"sop"`
	OriginalName string          `json:"original_name,omitempty"`
}

// SopSavedResult is sops/save's {saved: name}.
type SopSavedResult struct {
	Saved string `json:"saved"`
}

// SopCreatedResult is sops/create's {created: name}.
type SopCreatedResult struct {
	Created string `json:"created"`
}

// SopDeletedResult is sops/delete's {deleted: name}.
type SopDeletedResult struct {
	Deleted string `json:"deleted"`
}

// SopWireDraftParams is sops/wire-draft: a draft Sop and one wire edit.
type SopWireDraftParams struct {
	Sop  json.RawMessage `json:"sop"`
	Edit json.RawMessage `json:"edit"`
}

// SopGraphDraftParams is sops/graph-draft.
type SopGraphDraftParams struct {
	Sop json.RawMessage `json:"sop"`
}

// SopDiagnostic is one SOP that did not load.
type SopDiagnostic struct {
	Dir    string   `json:"dir"`
	Reason string   `json:"reason"`
	Issues []string `json:"issues,omitempty"` // file:line: message
}

// SopDiagnosticsResult is sops/diagnostics.
type SopDiagnosticsResult struct {
	Dir      string          `json:"dir"`
	Disabled []SopDiagnostic `json:"disabled"`
	Warnings []string        `json:"warnings"` // file:line: message of the SOPs that loaded
}
