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

// ConfigEntry is one leaf of config/list. Secret values are masked.
type ConfigEntry struct {
	Prop    string `json:"prop"`
	Value   any    `json:"value"`
	Secret  bool   `json:"secret"`
	Default any    `json:"default,omitempty"`
	Note    string `json:"note,omitempty"` // what an unset or zero value means, when that is not obvious
}

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

// ConfigReloadResult is the result of config/reload.
type ConfigReloadResult struct {
	Reloaded   bool   `json:"reloaded"`
	Generation uint64 `json:"generation"`
}
