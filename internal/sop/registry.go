package sop

// TriggerSources is sops/trigger-sources' result (upstream's TriggerSourceRegistry): the trigger types, the
// fields and condition contract of each, the configured channels a channel trigger may name, and the
// condition operators.
type TriggerSources struct {
	Sources   []string           `json:"sources"`
	Bound     []BoundSource      `json:"bound"`
	Channels  []ChannelKind      `json:"channels"`
	Operators []ConditionOpEntry `json:"operators"`
}

// BoundSource is one non-channel trigger type with the fields its form edits.
type BoundSource struct {
	Source    string           `json:"source"`
	Fields    []TriggerField   `json:"fields"`
	Condition *PayloadContract `json:"condition,omitempty"`
}

// TriggerField is one editable field of a trigger.
type TriggerField struct {
	Name    string   `json:"name"`
	Options []string `json:"options,omitempty"`
	Multi   bool     `json:"multi,omitempty"`
	Kind    string   `json:"kind"` // text | list | expression
}

// PayloadContract says what a trigger's condition can test.
type PayloadContract struct {
	Open   bool             `json:"open"`
	Direct bool             `json:"direct,omitempty"`
	Fields []ConditionField `json:"fields,omitempty"`
}

// ConditionField is one payload field a condition may name.
type ConditionField struct {
	Path      string   `json:"path"`
	Label     string   `json:"label"`
	ValueType string   `json:"value_type"` // string | number | bool | enum | date_time
	Options   []string `json:"options,omitempty"`
}

// ChannelKind is a channel type a channel trigger may name, with its configured aliases.
type ChannelKind struct {
	Channel    string           `json:"channel"`
	Aliases    []ChannelAlias   `json:"aliases"`
	Configured bool             `json:"configured"`
	SetupPath  string           `json:"setup_path"`
	Condition  *PayloadContract `json:"condition,omitempty"`
}

// ChannelAlias is one configured instance of a channel.
type ChannelAlias struct {
	Alias       string `json:"alias"`
	Enabled     bool   `json:"enabled"`
	OwningAgent string `json:"owning_agent,omitempty"`
}

// ConditionOpEntry is one condition operator.
type ConditionOpEntry struct {
	Token string `json:"token"`
	Label string `json:"label"`
}

// Registry builds the trigger-source registry. channels are the channel kinds this daemon can feed (none
// today: it has no inbound chat channels, so a channel trigger never fires, and the registry says so).
func Registry(channels []ChannelKind) TriggerSources {
	r := TriggerSources{Sources: []string{}, Bound: []BoundSource{}, Channels: channels, Operators: []ConditionOpEntry{}}
	if r.Channels == nil {
		r.Channels = []ChannelKind{}
	}
	for _, s := range Sources {
		r.Sources = append(r.Sources, string(s))
		if s == SourceChannel {
			continue
		}
		r.Bound = append(r.Bound, BoundSource{Source: string(s), Fields: triggerFieldsOf(s), Condition: contractOf(s)})
	}
	for _, o := range Operators {
		r.Operators = append(r.Operators, ConditionOpEntry(o))
	}
	return r
}

func triggerFieldsOf(s Source) []TriggerField {
	text := func(n string) TriggerField { return TriggerField{Name: n, Kind: "text"} }
	cond := TriggerField{Name: "condition", Kind: "expression"}
	switch s {
	case SourceMQTT:
		return []TriggerField{text("topic"), cond}
	case SourceWebhook:
		return []TriggerField{text("path")}
	case SourceCron:
		return []TriggerField{text("expression")}
	case SourcePeripheral:
		return []TriggerField{text("board"), text("signal"), cond}
	case SourceFilesystem:
		return []TriggerField{text("path"), {Name: "events", Options: []string{"created", "modified", "deleted", "renamed"}, Multi: true, Kind: "list"}, cond}
	case SourceCalendar:
		return []TriggerField{text("calendar_source"), {Name: "calendar_ids", Kind: "list"}, cond}
	case SourceAMQP:
		return []TriggerField{text("routing_key"), cond}
	}
	return []TriggerField{}
}

func contractOf(s Source) *PayloadContract {
	switch s {
	case SourceFilesystem:
		return &PayloadContract{Fields: []ConditionField{
			{Path: "event", Label: "Change kind", ValueType: "enum", Options: []string{"created", "modified", "deleted", "renamed"}},
			{Path: "path", Label: "Path", ValueType: "string"}}}
	case SourceCalendar:
		return &PayloadContract{Fields: []ConditionField{
			{Path: "event_id", Label: "Event ID", ValueType: "string"},
			{Path: "event_title", Label: "Event title", ValueType: "string"},
			{Path: "expected_start", Label: "Expected start", ValueType: "date_time"}}}
	case SourcePeripheral:
		return &PayloadContract{Direct: true, Fields: []ConditionField{{Path: "", Label: "Signal value", ValueType: "number"}}}
	case SourceMQTT, SourceAMQP:
		return &PayloadContract{Open: true}
	}
	return nil
}
