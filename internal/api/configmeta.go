package api

// Config introspection and map-key methods (upstream's config/validate, config/map-*, config/templates,
// config/sections, config/status, config/catalog*, config/resolve-alias-source).
const (
	MethodConfigValidate           = "config/validate"
	MethodConfigMapKeys            = "config/map-keys"
	MethodConfigMapKeyCreate       = "config/map-key-create"
	MethodConfigMapKeyDelete       = "config/map-key-delete"
	MethodConfigMapKeyRename       = "config/map-key-rename"
	MethodConfigTemplates          = "config/templates"
	MethodConfigSections           = "config/sections"
	MethodConfigStatus             = "config/status"
	MethodConfigCatalog            = "config/catalog"
	MethodConfigCatalogModels      = "config/catalog-models"
	MethodConfigResolveAliasSource = "config/resolve-alias-source"
)

// ConfigValidateResult is the result of config/validate: whether config.toml as it is on disk now would load.
// Error is the whole report when it would not; Warnings (ours) are what loading it would log.
type ConfigValidateResult struct {
	Valid    bool     `json:"valid"`
	Error    string   `json:"error,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// ConfigMapKeysParams are the params of config/map-keys.
type ConfigMapKeysParams struct {
	Path string `json:"path"`
}

// ConfigMapKeysResult is the result of config/map-keys: the entry keys of the map-keyed section, sorted.
type ConfigMapKeysResult struct {
	Path string   `json:"path"`
	Keys []string `json:"keys"`
}

// ConfigMapKeyParams are the params of config/map-key-create and config/map-key-delete.
type ConfigMapKeyParams struct {
	Path string `json:"path"`
	Key  string `json:"key"`
}

// ConfigMapKeyCreateResult is the result of config/map-key-create: Created is false when the entry existed.
type ConfigMapKeyCreateResult struct {
	Path    string `json:"path"`
	Key     string `json:"key"`
	Created bool   `json:"created"`
}

// ConfigMapKeyDeleteResult is the result of config/map-key-delete: Deleted is false when there was no entry.
type ConfigMapKeyDeleteResult struct {
	Path    string `json:"path"`
	Key     string `json:"key"`
	Deleted bool   `json:"deleted"`
}

// ConfigMapKeyRenameParams are the params of config/map-key-rename.
type ConfigMapKeyRenameParams struct {
	Path string `json:"path"`
	From string `json:"from"`
	To   string `json:"to"`
}

// ConfigMapKeyRenameResult is the result of config/map-key-rename. Warnings name what could not follow the
// rename (a workspace directory left in place...); the config change itself is committed.
type ConfigMapKeyRenameResult struct {
	Path     string   `json:"path"`
	From     string   `json:"from"`
	To       string   `json:"to"`
	Renamed  bool     `json:"renamed"`
	Warnings []string `json:"warnings,omitempty"`
}

// ConfigTemplateEntry is one map-keyed section of config/templates: where entries can be created, what they
// hold (ValueType names our schema type) and what they are for. Kind is always "map" here.
type ConfigTemplateEntry struct {
	Path        string `json:"path"`
	Kind        string `json:"kind"`
	ValueType   string `json:"value_type"`
	Description string `json:"description"`
}

// ConfigTemplatesResult is the result of config/templates.
type ConfigTemplatesResult struct {
	Templates []ConfigTemplateEntry `json:"templates"`
}

// Section shapes of config/sections (upstream's SectionShape).
const (
	ShapeDirectForm      = "direct_form"
	ShapeOneTierAliasMap = "one_tier_alias_map"
	ShapeTypedFamilyMap  = "typed_family_map"
)

// ConfigSectionEntry is one top-level section of config/sections.
type ConfigSectionEntry struct {
	Key          string `json:"key"`
	Label        string `json:"label"`
	Help         string `json:"help"`
	HasPicker    bool   `json:"has_picker"`
	Completed    bool   `json:"completed"`
	Ready        bool   `json:"ready"`
	Group        string `json:"group"`
	IsQuickstart bool   `json:"is_quickstart"`
	Shape        string `json:"shape,omitempty"`
	CostCategory string `json:"cost_category"`
}

// ConfigSectionsResult is the result of config/sections: quickstart sections first, in their order, then the
// others by key.
type ConfigSectionsResult struct {
	Sections []ConfigSectionEntry `json:"sections"`
}

// ConfigStatusResult is the result of config/status: which quickstart sections have nothing configured.
type ConfigStatusResult struct {
	NeedsQuickstart bool     `json:"needs_quickstart"`
	Reason          string   `json:"reason"`
	HasPartialState bool     `json:"has_partial_state"`
	Missing         []string `json:"missing"`
}

// CatalogModelProvider is one provider family of config/catalog.
type CatalogModelProvider struct {
	Name        string `json:"name"`
	DisplayName string `json:"display_name"`
	Local       bool   `json:"local"`
}

// CatalogResult is the result of config/catalog.
type CatalogResult struct {
	ModelProviders []CatalogModelProvider `json:"model_providers"`
}

// CatalogModelsParams are the params of config/catalog-models; "provider" is accepted for model_provider, as
// upstream does. The value is a family ("openai") or a configured reference ("openai.work").
type CatalogModelsParams struct {
	ModelProvider string `json:"model_provider"`
	Provider      string `json:"provider,omitempty"`
	// Live (ours) asks the configured provider "<family>.<alias>" itself which models it offers (the result's
	// live is then true) instead of the built-in list.
	Live bool `json:"live,omitempty"`
}

// CatalogModelsResult is the result of config/catalog-models. Live is always false: the list is built in, never
// fetched from the backend. Pricing (USD per million tokens) is given for models that cost.prices prices.
type CatalogModelsResult struct {
	ModelProvider string                  `json:"model_provider"`
	Models        []string                `json:"models"`
	Pricing       map[string]ModelPricing `json:"pricing,omitempty"`
	Local         bool                    `json:"local"`
	Live          bool                    `json:"live"`
}

// ModelPricing is a model's price in USD per million tokens.
type ModelPricing struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
}

// ConfigResolveAliasSourceParams are the params of config/resolve-alias-source: source is one of upstream's
// alias namespaces (model_providers, risk_profiles, agents, channels, ...).
type ConfigResolveAliasSourceParams struct {
	Source string `json:"source"`
}

// ConfigResolveAliasSourceResult is the result of config/resolve-alias-source: the values a field referring
// to that namespace may take, sorted ("<family>.<alias>" for model_providers).
type ConfigResolveAliasSourceResult struct {
	Source string   `json:"source"`
	Values []string `json:"values"`
}
