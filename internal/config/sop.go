package config

import (
	"fmt"
	"path/filepath"
	"strings"
)

// SOPConfig is [sop]: standard operating procedures (upstream's SopConfig, spec upstream/sop.md §2). Keys and
// defaults are upstream's.
type SOPConfig struct {
	SOPsDir                  string            `toml:"sops_dir" note:"unset: no SOP runtime (authoring still uses <install>/shared/sops)" desc:"Directory of SOP folders (<name>/SOP.toml + SOP.md); relative to the install root, ~ expanded. Setting it turns the SOP runtime on."`
	DefaultExecutionMode     string            `toml:"default_execution_mode" desc:"Execution mode of a SOP that names none: auto, supervised, step_by_step, priority_based or deterministic (anything else: supervised)."`
	MaxConcurrentTotal       int               `toml:"max_concurrent_total" desc:"Most SOP runs executing at once, over every SOP."`
	ApprovalTimeoutSecs      int               `toml:"approval_timeout_secs" note:"0: never" desc:"Seconds a run may wait at an approval gate before approval_timeout_action applies."`
	ApprovalTimeoutAction    string            `toml:"approval_timeout_action" enum:"escalate|cancel|auto_approve" desc:"What a timed-out approval gate does: escalate (notify again), cancel the run, or auto_approve."`
	ApprovalMode             string            `toml:"approval_mode" enum:"both|out_of_band_required|agent_tool" desc:"Who may clear a gate: both, out_of_band_required (not the agent itself) or agent_tool (only the agent)."`
	Approval                 SOPApprovalConfig `toml:"approval"`
	MaxFinishedRuns          int               `toml:"max_finished_runs" note:"0: unlimited" desc:"Finished runs kept (in memory and in runs.db)."`
	MaintenanceIntervalSecs  int               `toml:"maintenance_interval_secs" note:"0: no tick (no cron triggers, no approval timeouts)" desc:"Seconds between SOP maintenance ticks."`
	PersistRuns              bool              `toml:"persist_runs" desc:"Keep runs in runs.db (false: in memory only)."`
	RunStoreBackend          string            `toml:"run_store_backend" enum:"sqlite|memory" desc:"Where runs are kept: sqlite (runs.db) or memory."`
	RunStateDir              string            `toml:"run_state_dir" note:"empty: <data_dir>/sop" desc:"Directory of runs.db; ~ expanded."`
	StepScopeEnforce         bool              `toml:"step_scope_enforce" desc:"Enforce each step's tool scope (allow/deny) instead of only suggesting it."`
	StepMandatoryTools       []string          `toml:"step_mandatory_tools" desc:"Tools a step always keeps under scope enforcement."`
	StepSchemaEnforce        bool              `toml:"step_schema_enforce" desc:"Check step input and output against their schemas."`
	MaxStepVisits            int               `toml:"max_step_visits" desc:"Most times one step may run in a run (loops included)."`
	MaxStepRetries           int               `toml:"max_step_retries" desc:"Most retries of a failed step, whatever its on_failure asks."`
	UntrustedPayloadMaxBytes int               `toml:"untrusted_payload_max_bytes" note:"0: no cap" desc:"Bytes of a trigger's topic and payload kept (cut at a character boundary)."`
	UntrustedInputGuard      string            `toml:"untrusted_input_guard" enum:"warn|block|sanitize" desc:"What a trigger payload that looks like an injection does: warn, block the run, or sanitize it."`
	UntrustedGuardSense      float64           `toml:"untrusted_guard_sensitivity" desc:"Sensitivity of the injection guard, 0 to 1."`
	UntrustedFrameWarning    bool              `toml:"untrusted_frame_warning" desc:"Frame trigger payloads in step prompts with a warning that they are data."`
	UntrustedOutboundRedact  bool              `toml:"untrusted_outbound_redact" desc:"Redact secrets from what SOP runs send out."`
	ProceduralMemoryEnabled  bool              `toml:"procedural_memory_enabled" desc:"Offer the sop_workshop tool (SOP proposals)."`
}

// SOPApprovalConfig is [sop.approval]: approver groups and gate policies.
type SOPApprovalConfig struct {
	Groups   map[string]SOPApprovalGroup  `toml:"groups"`
	Policies map[string]SOPApprovalPolicy `toml:"policies"`
}

// SOPApprovalGroup is sop.approval.groups.<g>.
type SOPApprovalGroup struct {
	Members []string `toml:"members" desc:"Who is in the group: http:<sha256 of a bearer>, ws:<subject>, agent:<alias>, cli:<user>, channel:<key>:<sender>, or a bare id."`
}

// SOPApprovalPolicy is sop.approval.policies.<p>, named by a step's policy.
type SOPApprovalPolicy struct {
	RequiredGroup   string `toml:"required_group" note:"empty: no membership check" desc:"Group whose members may approve."`
	Quorum          int    `toml:"quorum" note:"0 or 1: one approver" desc:"Distinct approvers needed."`
	RequestRoute    string `toml:"request_route" desc:"Where the approval request is sent: <channel>[.<alias>]:<recipient>."`
	EscalationRoute string `toml:"escalation_route" desc:"Where an escalation is sent (empty: request_route)."`
}

// RuntimeEnabled reports whether the SOP runtime runs (engine, tools, tick, store): sops_dir is set.
func (c SOPConfig) RuntimeEnabled() bool { return strings.TrimSpace(c.SOPsDir) != "" }

// DefaultSOP is [sop] with upstream's defaults.
func DefaultSOP() SOPConfig {
	return SOPConfig{DefaultExecutionMode: "supervised", MaxConcurrentTotal: 4, ApprovalTimeoutSecs: 300,
		ApprovalTimeoutAction: "escalate", ApprovalMode: "both", MaxFinishedRuns: 100,
		MaintenanceIntervalSecs: 60, PersistRuns: true, RunStoreBackend: "sqlite",
		StepMandatoryTools: []string{"sop_advance", "sop_approve", "sop_status"}, StepSchemaEnforce: true,
		MaxStepVisits: 256, MaxStepRetries: 2, UntrustedPayloadMaxBytes: 8192, UntrustedInputGuard: "warn",
		UntrustedGuardSense: 0.7, UntrustedFrameWarning: true, UntrustedOutboundRedact: true}
}

// validateSOP checks [sop]. The enums upstream's serde refuses (run_store_backend, approval_mode,
// approval_timeout_action) are errors; default_execution_mode, which upstream reads leniently, is a warning.
func validateSOP(cfg *Config, v *validator) []string {
	var warnings []string
	validateSOPChannels(cfg, v)
	s := cfg.SOP
	at := func(k ...string) Path { return append(Path{"sop"}, k...) }
	enum := func(key, val string, allowed ...string) {
		for _, a := range allowed {
			if val == a {
				return
			}
		}
		v.add(at(key), "must be %s, got %q", orList(allowed), val)
	}
	enum("run_store_backend", s.RunStoreBackend, "sqlite", "memory")
	enum("approval_mode", s.ApprovalMode, "both", "out_of_band_required", "agent_tool")
	enum("approval_timeout_action", s.ApprovalTimeoutAction, "escalate", "cancel", "auto_approve")
	switch strings.ToLower(strings.TrimSpace(s.DefaultExecutionMode)) {
	case "auto", "supervised", "step_by_step", "priority_based", "deterministic":
	default:
		warnings = append(warnings, fmt.Sprintf("config: sop.default_execution_mode %q is unknown; using supervised", s.DefaultExecutionMode))
	}
	switch s.UntrustedInputGuard {
	case "warn", "block", "sanitize":
	default:
		warnings = append(warnings, fmt.Sprintf("config: sop.untrusted_input_guard %q is unknown; using warn", s.UntrustedInputGuard))
	}
	for _, n := range []struct {
		key string
		val int
	}{{"max_concurrent_total", s.MaxConcurrentTotal}, {"approval_timeout_secs", s.ApprovalTimeoutSecs},
		{"max_finished_runs", s.MaxFinishedRuns}, {"maintenance_interval_secs", s.MaintenanceIntervalSecs},
		{"max_step_visits", s.MaxStepVisits}, {"max_step_retries", s.MaxStepRetries},
		{"untrusted_payload_max_bytes", s.UntrustedPayloadMaxBytes}} {
		if n.val < 0 {
			v.add(at(n.key), "must not be negative, got %d", n.val)
		}
	}
	if g := s.UntrustedGuardSense; g < 0 || g > 1 {
		v.add(at("untrusted_guard_sensitivity"), "must be between 0 and 1, got %g", g)
	}
	for _, name := range sortedKeys(s.Approval.Policies) {
		p := s.Approval.Policies[name]
		if p.Quorum < 0 {
			v.add(at("approval", "policies", name, "quorum"), "must not be negative, got %d", p.Quorum)
		}
		if g := p.RequiredGroup; g != "" {
			if _, ok := s.Approval.Groups[g]; !ok {
				v.add(at("approval", "policies", name, "required_group"), "group %q is not defined under sop.approval.groups", g)
			}
		}
		for _, r := range []struct{ key, val string }{{"request_route", p.RequestRoute}, {"escalation_route", p.EscalationRoute}} {
			if r.val != "" && !validRoute(r.val) {
				v.add(at("approval", "policies", name, r.key), "must be \"<channel>[.<alias>]:<recipient>\", got %q", r.val)
			}
		}
	}
	return warnings
}

func validRoute(r string) bool {
	ch, rcpt, ok := strings.Cut(r, ":")
	return ok && strings.TrimSpace(ch) != "" && strings.TrimSpace(rcpt) != ""
}

func orList(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// MQTTConfig is channels.mqtt.<alias>: a broker the daemon subscribes to for SOP mqtt triggers (upstream's
// MqttConfig; an input-only fan-in, not a chat channel). Password is a secret (enc2: in the file).
type MQTTConfig struct {
	Enabled       bool     `toml:"enabled" desc:"Connect to this broker and feed its messages to SOP mqtt triggers."`
	BrokerURL     string   `toml:"broker_url" desc:"Broker URL: mqtt://host[:1883] or mqtts://host[:8883]."`
	ClientID      string   `toml:"client_id" desc:"MQTT client id (the broker keeps this client's QoS 1 session under it)."`
	Topics        []string `toml:"topics" desc:"Topic filters subscribed besides those of the SOPs' mqtt triggers."`
	QoS           int      `toml:"qos" desc:"Subscription QoS: 0, 1 (default: a message the daemon did not finish is redelivered) or 2."`
	Username      string   `toml:"username" desc:"User name for the broker; empty: none."`
	Password      string   `toml:"password" desc:"Password for the broker (a secret, stored encrypted)."`
	UseTLS        bool     `toml:"use_tls" desc:"Use TLS; must agree with the broker_url scheme (mqtts://)."`
	KeepAliveSecs int      `toml:"keep_alive_secs" desc:"Seconds between keep-alive pings."`
	ExcludedTools []string `toml:"excluded_tools" desc:"Tools left out of the turns this channel's events start (upstream's key)."`
	// ChatTopic and ReplyTopic are ours (upstream's MQTT is input-only): with ChatTopic set, the broker is also
	// a chat channel (internal/channel/mqtt). ChatTopic is a filter with one "+" level, the sender's id (a
	// broker ACL such as mosquitto's "pattern write zeroclaw/%u/in" binds it to the authenticated user);
	// replies go to ReplyTopic with {sender} replaced.
	ChatTopic  string `toml:"chat_topic" note:"empty: no chat, SOP events only" desc:"Topic filter of chat messages for the agent, one + level being the sender's id (e.g. zeroclaw/+/in)."`
	ReplyTopic string `toml:"reply_topic" desc:"Topic the agent's replies are published to; {sender} is replaced by the sender's id (e.g. zeroclaw/{sender}/out)."`
}

func (m *MQTTConfig) setDefaults() { m.QoS, m.KeepAliveSecs = 1, 30 }

// FilesystemConfig is channels.filesystem.<alias>: directories whose changes feed SOP filesystem triggers
// (upstream's FilesystemConfig). A SOP may watch a path outside the install only below one of these paths.
type FilesystemConfig struct {
	Enabled         bool     `toml:"enabled" desc:"Watch these paths and feed their changes to SOP filesystem triggers."`
	Paths           []string `toml:"paths" desc:"Absolute directories (~ expanded) to watch, and below which SOP filesystem triggers may watch."`
	Recursive       bool     `toml:"recursive" desc:"Watch the directories below each path too."`
	Include         []string `toml:"include" desc:"Globs of the paths reported; empty: all."`
	Exclude         []string `toml:"exclude" desc:"Globs of the paths never reported (after include)."`
	Events          []string `toml:"events" desc:"Change kinds reported: created, modified, deleted, renamed."`
	DebounceMS      int      `toml:"debounce_ms" desc:"Repeated changes of one path and kind within this window count once."`
	SettleMS        int      `toml:"settle_ms" desc:"Wait this long after a change before reading the file's metadata."`
	ReadContent     bool     `toml:"read_content" desc:"Put the file's content in the event payload (at most max_content_bytes; larger files get none)."`
	FollowSymlinks  bool     `toml:"follow_symlinks" desc:"Report a change through a symlink whose target stays inside a watched path (off: symlinks are skipped)."`
	MaxContentBytes int      `toml:"max_content_bytes" desc:"Largest file content put in a payload."`
	AllowBroadRoots bool     `toml:"allow_broad_roots" desc:"Allow watching /, /home, /etc, /var, /proc, /sys, /dev or /tmp themselves."`
	ExcludedTools   []string `toml:"excluded_tools" desc:"Tools left out of the turns this channel's events start (upstream's key)."`
}

func (f *FilesystemConfig) setDefaults() {
	f.Recursive, f.DebounceMS, f.SettleMS, f.MaxContentBytes = true, 500, 250, 65536
	f.Events = []string{"created", "modified", "deleted", "renamed"}
}

// validateSOPChannels checks channels.mqtt and channels.filesystem as upstream's validate does (only the
// enabled entries must be complete).
func validateSOPChannels(cfg *Config, v *validator) {
	for _, alias := range sortedKeys(cfg.Channels.MQTT) {
		m := cfg.Channels.MQTT[alias]
		at := func(k string) Path { return Path{"channels", "mqtt", alias, k} }
		if m.QoS < 0 || m.QoS > 2 {
			v.add(at("qos"), "qos must be 0, 1, or 2, got %d", m.QoS)
		}
		if m.KeepAliveSecs < 0 {
			v.add(at("keep_alive_secs"), "must not be negative, got %d", m.KeepAliveSecs)
		}
		if !m.Enabled && m.BrokerURL == "" {
			continue
		}
		tls, plain := strings.HasPrefix(m.BrokerURL, "mqtts://"), strings.HasPrefix(m.BrokerURL, "mqtt://")
		switch {
		case !tls && !plain:
			v.add(at("broker_url"), "broker_url must start with 'mqtt://' or 'mqtts://', got: %s", m.BrokerURL)
		case plain && m.UseTLS:
			v.add(at("use_tls"), "use_tls is true but broker_url uses 'mqtt://' (not 'mqtts://')")
		case tls && !m.UseTLS:
			v.add(at("use_tls"), "use_tls is false but broker_url uses 'mqtts://' (requires use_tls: true)")
		}
		if m.Enabled && strings.TrimSpace(m.ClientID) == "" {
			v.add(at("client_id"), "client_id must not be empty")
		}
		if m.ChatTopic != "" || m.ReplyTopic != "" {
			if msg := ChatTopicProblem(m.ChatTopic); msg != "" {
				v.add(at("chat_topic"), "%s", msg)
			}
			if msg := ReplyTopicProblem(m.ReplyTopic); msg != "" {
				v.add(at("reply_topic"), "%s", msg)
			}
		}
	}
	for _, alias := range sortedKeys(cfg.Channels.Filesystem) {
		f := cfg.Channels.Filesystem[alias]
		at := func(k string) Path { return Path{"channels", "filesystem", alias, k} }
		for i, p := range f.Paths {
			if p = strings.TrimSpace(p); !(filepath.IsAbs(p) || p == "~" || strings.HasPrefix(p, "~/")) {
				v.add(at("paths"), "entry %d (%q) must be an absolute directory", i, f.Paths[i])
			}
		}
		for _, e := range f.Events {
			switch e {
			case "created", "modified", "deleted", "renamed":
			default:
				v.add(at("events"), "unknown event %q (want created, modified, deleted or renamed)", e)
			}
		}
		for _, n := range []struct {
			k string
			v int
		}{{"debounce_ms", f.DebounceMS}, {"settle_ms", f.SettleMS}, {"max_content_bytes", f.MaxContentBytes}} {
			if n.v < 0 {
				v.add(at(n.k), "must not be negative, got %d", n.v)
			}
		}
	}
}

// ChatTopicProblem says what is wrong with a channels.mqtt chat_topic ("" : nothing): it must be a topic
// filter with exactly one "+" level (the sender) and no "#".
func ChatTopicProblem(t string) string {
	if t == "" || len(t) > 1024 || strings.ContainsRune(t, 0) {
		return "chat_topic must be a topic filter with one + level (the sender's id), e.g. zeroclaw/+/in"
	}
	plus := 0
	for _, l := range strings.Split(t, "/") {
		switch {
		case l == "+":
			plus++
		case strings.ContainsAny(l, "+#"):
			return fmt.Sprintf("chat_topic %q: wildcards other than one whole + level are not allowed", t)
		}
	}
	if plus != 1 {
		return fmt.Sprintf("chat_topic %q must have exactly one + level (the sender's id), has %d", t, plus)
	}
	return ""
}

// ReplyTopicProblem says what is wrong with a channels.mqtt reply_topic: a topic without wildcards holding
// {sender} once.
func ReplyTopicProblem(t string) string {
	switch {
	case t == "" || len(t) > 1024 || strings.ContainsRune(t, 0):
		return "reply_topic must be a topic holding {sender}, e.g. zeroclaw/{sender}/out"
	case strings.ContainsAny(t, "+#"):
		return fmt.Sprintf("reply_topic %q must not hold wildcards", t)
	case strings.Count(t, "{sender}") != 1:
		return fmt.Sprintf("reply_topic %q must hold {sender} exactly once", t)
	}
	return ""
}
