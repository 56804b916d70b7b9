package api

import (
	"encoding/json"
	"errors"
)

// Locale and tool-parameter methods (upstream's names).
const (
	MethodLocalesList       = "locales/list"
	MethodLocalesFetch      = "locales/fetch"
	MethodToolsParamOptions = "tools/param-options"
)

// LocaleOption is one selectable locale of the registry (upstream's LocaleOption).
type LocaleOption struct {
	Code  string `json:"code"`
	Label string `json:"label"`
}

// LocalesListResult is locales/list's result: the embedded registry, in its order.
type LocalesListResult struct {
	Locales []LocaleOption `json:"locales"`
}

// LocalesFetchParams are locales/fetch's params: a registry locale and the catalogues wanted (cli, tools,
// zerocode; empty or absent: all).
type LocalesFetchParams struct {
	Locale  string       `json:"locale"`
	Catalog CatalogNames `json:"catalog"`
}

// CatalogNames is locales/fetch's catalog list. Absent is empty, but null is refused as upstream's serde
// refuses it.
type CatalogNames []string

// UnmarshalJSON decodes a list of names; null is an error.
func (c *CatalogNames) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return errors.New("invalid type: null, expected a sequence")
	}
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return err
	}
	*c = names
	return nil
}

// FetchedCatalog is one catalogue's bytes, for the client to write into its own config dir.
type FetchedCatalog struct {
	Name     string `json:"name"`
	Filename string `json:"filename"`
	Content  string `json:"content"`
}

// LocalesFetchResult is locales/fetch's result. Skipped names the catalogues that have no file.
type LocalesFetchResult struct {
	Locale   string           `json:"locale"`
	Catalogs []FetchedCatalog `json:"catalogs"`
	Skipped  []string         `json:"skipped"`
}

// ToolsParamOptionsParams are tools/param-options' params: a domain of live choices, the agent they are for
// ("" or absent: the smallest configured alias) and the sibling arguments already chosen.
type ToolsParamOptionsParams struct {
	Domain string         `json:"domain"`
	Agent  string         `json:"agent,omitempty"`
	Args   map[string]any `json:"args,omitempty"`
}

// ParamOption is one choice; Label and Hint are omitted when empty.
type ParamOption struct {
	Value string `json:"value"`
	Label string `json:"label,omitempty"`
	Hint  string `json:"hint,omitempty"`
}

// ToolsParamOptionsResult is tools/param-options' result.
type ToolsParamOptionsResult struct {
	Options []ParamOption `json:"options"`
}

// The domains of tools/param-options (upstream's ParamDomain, snake_case on the wire).
const (
	ParamDomainChannelRefs      = "channel_refs"
	ParamDomainPeerTargets      = "peer_targets"
	ParamDomainPeerGroups       = "peer_groups"
	ParamDomainAgentAliases     = "agent_aliases"
	ParamDomainToolNames        = "tool_names"
	ParamDomainMemoryCategories = "memory_categories"
)
