package api

import "encoding/json"

// ConfigGetParams are the params of config/get; an empty Prop asks for the whole config.
type ConfigGetParams struct {
	Prop string `json:"prop,omitempty"`
}

// ConfigGetResult is the result of config/get for one property (the whole config is returned bare).
type ConfigGetResult struct {
	Prop  string `json:"prop"`
	Value any    `json:"value"`
}

// ConfigSetParams are the params of config/set, and one entry of config/set-many.
type ConfigSetParams struct {
	Prop  string          `json:"prop"`
	Value json.RawMessage `json:"value"`
}

// ConfigSetResult is the result of config/set: Prop is the canonical path that was written.
type ConfigSetResult struct {
	Prop string `json:"prop"`
	Set  bool   `json:"set"`
}

// ConfigSetManyParams are the params of config/set-many: applied all or nothing.
type ConfigSetManyParams struct {
	Sets []ConfigSetParams `json:"sets"`
}

// ConfigSetManyResult is the result of config/set-many: the canonical paths written, in order, without repeats.
type ConfigSetManyResult struct {
	Props []string `json:"props"`
	Set   bool     `json:"set"`
}

// ConfigListParams are the params of config/list.
type ConfigListParams struct {
	Prefix string `json:"prefix,omitempty"`
}

// ConfigEntry is one leaf of config/list: upstream's ConfigFieldEntry, then our fields. Value is the leaf's
// current value as JSON (number, bool, string, list); a secret never carries one (Value nil, Populated says
// whether it is set).
type ConfigEntry struct {
	Path            string   `json:"path"`
	Category        string   `json:"category"`  // the top-level section, e.g. "Gateway" ("Core" for top-level keys)
	Kind            string   `json:"kind"`      // a PropKind* value
	TypeHint        string   `json:"type_hint"` // the value's type in words, e.g. "integer", "optional float"
	Value           any      `json:"value,omitempty"`
	Populated       bool     `json:"populated"` // the leaf holds a value (not unset, empty or an empty list)
	IsSecret        bool     `json:"is_secret"`
	IsEnvOverridden bool     `json:"is_env_overridden"` // a ZEROCLAW_ variable sets it, not the file
	EnumVariants    []string `json:"enum_variants,omitempty"`
	Description     string   `json:"description"`
	Section         string   `json:"section,omitempty"`      // the top-level table it lives in
	AliasSource     string   `json:"alias_source,omitempty"` // for alias_ref: the namespace it names, e.g. "model_providers"

	Prop    string `json:"prop"` // same as Path
	Secret  bool   `json:"secret"`
	Default any    `json:"default,omitempty"`
	Note    string `json:"note,omitempty"` // what an unset or zero value means, when that is not obvious
}

// Kinds of config/list entries (upstream's PropKind).
const (
	PropKindString      = "string"
	PropKindBool        = "bool"
	PropKindInteger     = "integer"
	PropKindFloat       = "float"
	PropKindEnum        = "enum"
	PropKindAliasRef    = "alias_ref"
	PropKindStringArray = "string_array"
)

// ConfigListResult is the result of config/list.
type ConfigListResult struct {
	Entries []ConfigEntry `json:"entries"`
}

// ConfigDeleteParams are the params of config/delete.
type ConfigDeleteParams struct {
	Prop string `json:"prop"`
}

// ConfigDeleteResult is the result of config/delete: Deleted is false when the file did not set Prop.
type ConfigDeleteResult struct {
	Prop    string `json:"prop"`
	Deleted bool   `json:"deleted"`
}

// ConfigReloadResult is the result of config/reload: Reloading is upstream's field; ours reloads before
// answering, so Reloaded is true too and Generation is the config generation now live.
type ConfigReloadResult struct {
	Reloading  bool   `json:"reloading"`
	Reloaded   bool   `json:"reloaded"`
	Generation uint64 `json:"generation"`
}
