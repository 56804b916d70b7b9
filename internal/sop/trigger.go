package sop

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Source is a trigger's type and an event's origin (lowercase on the wire).
type Source string

// Trigger sources, as upstream names them.
const (
	SourceMQTT       Source = "mqtt"
	SourceWebhook    Source = "webhook"
	SourceCron       Source = "cron"
	SourcePeripheral Source = "peripheral"
	SourceFilesystem Source = "filesystem"
	SourceCalendar   Source = "calendar"
	SourceChannel    Source = "channel"
	SourceManual     Source = "manual"
	SourceAMQP       Source = "amqp"
)

// Sources lists every trigger source in upstream's declaration order.
var Sources = []Source{SourceMQTT, SourceWebhook, SourceCron, SourcePeripheral, SourceFilesystem,
	SourceCalendar, SourceChannel, SourceManual, SourceAMQP}

// FSEvent is a normalized filesystem change kind.
type FSEvent string

// Filesystem change kinds.
const (
	FSCreated  FSEvent = "created"
	FSModified FSEvent = "modified"
	FSDeleted  FSEvent = "deleted"
	FSRenamed  FSEvent = "renamed"
)

// UnmarshalText refuses an unknown kind.
func (e *FSEvent) UnmarshalText(b []byte) error {
	switch v := FSEvent(b); v {
	case FSCreated, FSModified, FSDeleted, FSRenamed:
		*e = v
		return nil
	}
	return fmt.Errorf("unknown filesystem event %q (want created, modified, deleted or renamed)", b)
}

// Trigger is one [[triggers]] entry, tagged by Type. Only the fields of its type are meaningful and only
// those go on the wire: mqtt {topic, condition}, webhook {path}, cron {expression}, peripheral {board, signal,
// condition}, filesystem {path, events, condition}, calendar {calendar_source, calendar_ids, condition},
// channel {channel, alias, condition}, manual {}, amqp {routing_key, condition}.
type Trigger struct {
	Type           Source
	Topic          string    // mqtt
	Path           string    // webhook, filesystem
	Expression     string    // cron
	Board, Signal  string    // peripheral
	Events         []FSEvent // filesystem
	CalendarSource string    // calendar
	CalendarIDs    []string  // calendar
	Channel        string    // channel
	Alias          *string   // channel
	RoutingKey     string    // amqp
	// Condition is tested on the payload (mqtt, peripheral, filesystem, calendar, channel, amqp); nil: none.
	Condition *string
}

// triggerFields is the union of every variant's fields, the shape both JSON and TOML decode into.
type triggerFields struct {
	Type           *string   `json:"type" toml:"type"`
	Topic          *string   `json:"topic" toml:"topic"`
	Path           *string   `json:"path" toml:"path"`
	Expression     *string   `json:"expression" toml:"expression"`
	Board          *string   `json:"board" toml:"board"`
	Signal         *string   `json:"signal" toml:"signal"`
	Events         []FSEvent `json:"events" toml:"events"`
	CalendarSource *string   `json:"calendar_source" toml:"calendar_source"`
	CalendarIDs    []string  `json:"calendar_ids" toml:"calendar_ids"`
	Channel        *string   `json:"channel" toml:"channel"`
	Alias          *string   `json:"alias" toml:"alias"`
	RoutingKey     *string   `json:"routing_key" toml:"routing_key"`
	Condition      *string   `json:"condition" toml:"condition"`
}

// toTrigger checks the variant's required fields, as serde's internally tagged enum does.
func (f triggerFields) toTrigger() (Trigger, error) {
	if f.Type == nil {
		return Trigger{}, fmt.Errorf("missing field `type`")
	}
	t := Trigger{Type: Source(*f.Type), Condition: f.Condition}
	need := func(name string, v *string, dst *string) error {
		if v == nil {
			return fmt.Errorf("trigger type %q: missing field `%s`", t.Type, name)
		}
		*dst = *v
		return nil
	}
	var err error
	switch t.Type {
	case SourceMQTT:
		err = need("topic", f.Topic, &t.Topic)
	case SourceWebhook:
		err = need("path", f.Path, &t.Path)
		t.Condition = nil
	case SourceCron:
		err = need("expression", f.Expression, &t.Expression)
		t.Condition = nil
	case SourcePeripheral:
		if err = need("board", f.Board, &t.Board); err == nil {
			err = need("signal", f.Signal, &t.Signal)
		}
	case SourceFilesystem:
		err = need("path", f.Path, &t.Path)
		t.Events = f.Events
	case SourceCalendar:
		err = need("calendar_source", f.CalendarSource, &t.CalendarSource)
		t.CalendarIDs = f.CalendarIDs
	case SourceChannel:
		err = need("channel", f.Channel, &t.Channel)
		t.Alias = f.Alias
	case SourceManual:
		t.Condition = nil
	case SourceAMQP:
		err = need("routing_key", f.RoutingKey, &t.RoutingKey)
	default:
		return Trigger{}, fmt.Errorf("unknown trigger type %q (want one of %s)", *f.Type, sourceList())
	}
	return t, err
}

func sourceList() string {
	s := make([]string, len(Sources))
	for i, v := range Sources {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

// UnmarshalJSON reads the internally tagged form.
func (t *Trigger) UnmarshalJSON(b []byte) error {
	var f triggerFields
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	v, err := f.toTrigger()
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// MarshalJSON writes the variant's fields only, as serde does: condition as null when absent, events and
// calendar_ids as [] when empty.
func (t Trigger) MarshalJSON() ([]byte, error) {
	return json.Marshal(t.fields())
}

// fields is the ordered wire object of t.
func (t Trigger) fields() orderedObject {
	o := orderedObject{{"type", string(t.Type)}}
	cond := func() {
		if t.Condition == nil {
			o = append(o, kv{"condition", nil})
		} else {
			o = append(o, kv{"condition", *t.Condition})
		}
	}
	switch t.Type {
	case SourceMQTT:
		o = append(o, kv{"topic", t.Topic})
		cond()
	case SourceWebhook:
		o = append(o, kv{"path", t.Path})
	case SourceCron:
		o = append(o, kv{"expression", t.Expression})
	case SourcePeripheral:
		o = append(o, kv{"board", t.Board}, kv{"signal", t.Signal})
		cond()
	case SourceFilesystem:
		ev := t.Events
		if ev == nil {
			ev = []FSEvent{}
		}
		o = append(o, kv{"path", t.Path}, kv{"events", ev})
		cond()
	case SourceCalendar:
		ids := t.CalendarIDs
		if ids == nil {
			ids = []string{}
		}
		o = append(o, kv{"calendar_source", t.CalendarSource}, kv{"calendar_ids", ids})
		cond()
	case SourceChannel:
		var alias any
		if t.Alias != nil {
			alias = *t.Alias
		}
		o = append(o, kv{"channel", t.Channel}, kv{"alias", alias})
		cond()
	case SourceAMQP:
		o = append(o, kv{"routing_key", t.RoutingKey})
		cond()
	}
	return o
}

// Label is the trigger's one-line label as upstream's Display writes it: "manual", "mqtt:alerts/+/cpu",
// "peripheral:board/signal", "channel:telegram/ops".
func (t Trigger) Label() string {
	var v string
	switch t.Type {
	case SourceMQTT:
		v = t.Topic
	case SourceWebhook, SourceFilesystem:
		v = t.Path
	case SourceCron:
		v = t.Expression
	case SourcePeripheral:
		v = t.Board + "/" + t.Signal
	case SourceCalendar:
		v = t.CalendarSource
	case SourceChannel:
		v = t.Channel
		if t.Alias != nil {
			v += "/" + *t.Alias
		}
	case SourceAMQP:
		v = t.RoutingKey
	default:
		return string(t.Type)
	}
	return string(t.Type) + ":" + v
}

// ConditionText is the trigger's condition, "" when none.
func (t Trigger) ConditionText() string {
	if t.Condition == nil {
		return ""
	}
	return *t.Condition
}

type kv struct {
	k string
	v any
}

// orderedObject marshals as a JSON object with its keys in order.
type orderedObject []kv

func (o orderedObject) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(e.k)
		v, err := json.Marshal(e.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}
