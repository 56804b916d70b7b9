package quickstart

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/i18n"
)

// Plan is what a submission becomes against one config: the batch of sets that applies it, the agent it
// creates and the identity files to write once the config is saved; or, when Errors is not empty, nothing.
type Plan struct {
	Sets   []config.SetEntry
	Agent  api.AppliedAgent
	Files  []api.QuickstartPersonalityFile
	Errors []api.QuickstartError
}

// providerFields are the keys a fresh model provider's fields may carry (quickstart/fields), besides model.
var providerFields = []string{"auth_mode", "api_key", "uri"}

// planner accumulates one submission's plan.
type planner struct {
	cfg  *config.Config
	loc  *i18n.Localizer // the problems' words (nil: English, as on the wire)
	plan Plan
}

// fail records a problem: the catalogue message key with args (name, value pairs) in the planner's locale.
func (p *planner) fail(step, field, key string, args ...any) {
	p.failWith(step, field, p.loc.T(key, args...))
}

// problem is a planner's own problem as an error: its catalogue key, worded in the planner's locale by failErr.
type problem string

func (k problem) Error() string { return i18n.English().T(string(k)) }

// failErr records err as a problem: a problem in the planner's locale, another error's text as it is.
func (p *planner) failErr(step, field string, err error) {
	if k, ok := err.(problem); ok {
		p.fail(step, field, string(k))
		return
	}
	p.failWith(step, field, err.Error())
}

// failWith records a problem whose message is another package's error text, as it is.
func (p *planner) failWith(step, field, msg string) {
	p.plan.Errors = append(p.plan.Errors, api.QuickstartError{Step: step, Field: field, Message: msg})
}

func (p *planner) set(prop string, v any) {
	raw, _ := json.Marshal(v) // strings, bools and string lists: cannot fail
	p.plan.Sets = append(p.plan.Sets, config.SetEntry{Prop: prop, Value: raw})
}

// Build turns sub into a Plan against cfg, following upstream's apply order: the runtime choice, the model
// provider, the risk profile, memory and channels are checked first (a failing selector stops there); the
// agent, peer groups and identity files only when those all held. Nothing is written: Apply writes the plan.
// Every entry it creates is new (an alias that exists is an error), except a risk preset whose profile is
// already configured, which is reused untouched.
func Build(cfg *config.Config, sub *api.BuilderSubmission) Plan { return BuildIn(nil, cfg, sub) }

// BuildIn is Build with the problems' messages in loc's words (nil: English, what the quickstart/* methods
// answer).
func BuildIn(loc *i18n.Localizer, cfg *config.Config, sub *api.BuilderSubmission) Plan {
	plan := build(loc, cfg, sub)
	if len(plan.Errors) > 0 {
		return Plan{Errors: plan.Errors} // a plan with problems writes nothing, whichever step stopped it
	}
	return plan
}

func build(loc *i18n.Localizer, cfg *config.Config, sub *api.BuilderSubmission) Plan {
	p := &planner{cfg: cfg, loc: loc}
	runtime, ok := p.runtime(sub.RuntimeProfile)
	if !ok {
		return p.plan
	}
	provider, ok := p.provider(sub.ModelProvider)
	if !ok {
		return p.plan
	}
	risk, ok := p.risk(sub.RiskProfile)
	if !ok {
		return p.plan
	}
	memory, ok := p.memory(sub.Memory)
	if !ok {
		return p.plan
	}
	channels := p.channels(sub.Channels)
	if len(p.plan.Errors) > 0 {
		return p.plan
	}
	name := sub.Agent.Name
	switch _, exists := cfg.Agents[name]; {
	case strings.TrimSpace(name) == "":
		p.fail(api.QuickstartStepAgent, "name", "cli-qs-agent-name-required")
	case config.CheckAlias(name) != nil:
		p.fail(api.QuickstartStepAgent, "name", "cli-qs-agent-name-invalid", "name", fmt.Sprintf("%q", name), "max", config.MaxKeyBytes)
	case exists:
		p.fail(api.QuickstartStepAgent, "name", "cli-qs-agent-exists", "name", name)
	}
	if len(p.plan.Errors) > 0 {
		return p.plan
	}
	agent := "agents." + name
	p.set(agent+".model_provider", provider)
	p.set(agent+".risk_profile", risk)
	if memory != "" {
		p.set(agent+".memory.backend", memory)
	}
	if len(channels) > 0 {
		p.set(agent+".channels", channels)
	}
	p.peerGroups(sub.PeerGroups, name, channels)
	p.personality(sub.Agent.PersonalityFiles)
	p.set("onboard_state.quickstart_completed", true)
	memoryBackend := memory
	if memoryBackend == "" {
		memoryBackend = cfg.Memory.Backend
	}
	p.plan.Agent = api.AppliedAgent{Alias: name, ModelProvider: provider, RiskProfile: risk, RuntimeProfile: runtime,
		Channels: channels, MemoryBackend: memoryBackend}
	return p.plan
}

// existing decodes the value of an existing-mode selector: an alias or a <type>.<alias> reference.
func existing(sel api.Selector) (string, error) {
	var s string
	if err := json.Unmarshal(sel.Value, &s); err != nil {
		return "", problem("cli-qs-existing-not-string")
	}
	return s, nil
}

// fresh decodes the value of a fresh-mode selector into v.
func fresh(sel api.Selector, v any) error {
	if len(sel.Value) == 0 || string(sel.Value) == "null" {
		return problem("cli-qs-fresh-no-value")
	}
	if err := json.Unmarshal(sel.Value, v); err != nil {
		return problem("cli-qs-fresh-bad-shape")
	}
	return nil
}

func (p *planner) badMode(step string, sel api.Selector) {
	p.fail(step, "mode", "cli-qs-bad-mode", "mode", fmt.Sprintf("%q", sel.Mode))
}

// choose is the first planning step of every single-choice selector: an existing choice gives its alias or
// reference (isExisting), a fresh one is decoded into v. A bad mode or value is the step's error (ok false).
func (p *planner) choose(step string, sel api.Selector, v any) (ref string, isExisting, ok bool) {
	var err error
	switch sel.Mode {
	case api.SelectExisting:
		if ref, err = existing(sel); err == nil {
			return ref, true, true
		}
	case api.SelectFresh:
		if err = fresh(sel, v); err == nil {
			return "", false, true
		}
	default:
		p.badMode(step, sel)
		return "", false, false
	}
	p.failErr(step, "", err)
	return "", false, false
}

func (p *planner) runtime(sel api.Selector) (string, bool) {
	var name string
	ref, isExisting, ok := p.choose(api.QuickstartStepRuntimeProfile, sel, &name)
	switch {
	case !ok:
		return "", false
	case isExisting:
		p.fail(api.QuickstartStepRuntimeProfile, "", "cli-qs-no-profile", "ref", ref)
		return "", false
	case !slices.ContainsFunc(runtimePresets, func(r api.QuickstartPreset) bool { return r.PresetName == name }):
		p.fail(api.QuickstartStepRuntimeProfile, "", "cli-qs-unknown-runtime", "name", name)
		return "", false
	}
	return name, true
}

func (p *planner) provider(sel api.Selector) (string, bool) {
	const step = api.QuickstartStepModelProvider
	var mp api.QuickstartModelProvider
	ref, isExisting, ok := p.choose(step, sel, &mp)
	if !ok {
		return "", false
	}
	if isExisting {
		fam, alias, ok := strings.Cut(ref, ".")
		if !ok || fam == "" || alias == "" {
			p.fail(step, "", "cli-qs-bad-reference", "ref", ref)
			return "", false
		}
		if _, ok := p.cfg.Providers.Models[fam][alias]; !ok {
			p.fail(step, "", "cli-qs-no-provider", "family", fam, "alias", alias)
			return "", false
		}
		return ref, true
	}
	if strings.TrimSpace(mp.ProviderType) == "" || strings.TrimSpace(mp.Alias) == "" || strings.TrimSpace(mp.Model) == "" {
		p.fail(step, "", "cli-qs-provider-required")
		return "", false
	}
	t, ok := resolveType(mp.ProviderType)
	if !ok {
		p.fail(step, "provider_type", "cli-qs-unknown-provider-type", "type", visible(mp.ProviderType))
		return "", false
	}
	if err := config.CheckAlias(mp.Alias); err != nil {
		p.fail(step, "alias", "cli-qs-alias-invalid", "alias", fmt.Sprintf("%q", mp.Alias), "example", "default")
		return "", false
	}
	fam := t.row.Kind
	ref = fam + "." + mp.Alias
	if _, exists := p.cfg.Providers.Models[fam][mp.Alias]; exists {
		p.fail(step, "alias", "cli-qs-alias-exists", "ref", ref)
		return "", false
	}
	for _, k := range sortedKeys(mp.Fields) {
		if !slices.Contains(providerFields, k) || (fam == config.FamilyEcho && k != "model") {
			p.fail(step, "fields."+k, "cli-qs-provider-field", "field", visible(k))
			return "", false
		}
	}
	if mode, ok := mp.Fields["auth_mode"]; ok && mode != "" && mode != "api_key" {
		p.fail(step, "auth_mode", "cli-qs-auth-mode", "mode", visible(mode))
		return "", false
	}
	if strings.ContainsFunc(mp.Model, isControl) {
		p.fail(step, "model", "cli-qs-model-control")
		return "", false
	}
	prefix := "providers.models." + fam + "." + mp.Alias
	p.set(prefix+".model", mp.Model)
	for _, k := range []string{"api_key", "uri"} {
		if v := mp.Fields[k]; v != "" {
			p.set(prefix+"."+k, v)
		}
	}
	return ref, true
}

func (p *planner) risk(sel api.Selector) (string, bool) {
	const step = api.QuickstartStepRiskProfile
	var name string
	ref, isExisting, ok := p.choose(step, sel, &name)
	if !ok {
		return "", false
	}
	if isExisting {
		if _, ok := p.cfg.RiskProfiles[ref]; !ok {
			p.fail(step, "", "cli-qs-no-profile", "ref", ref)
			return "", false
		}
		return ref, true
	}
	i := slices.IndexFunc(riskPresets, func(r riskPreset) bool { return r.row.PresetName == name })
	if i < 0 {
		p.fail(step, "", "cli-qs-unknown-risk", "name", visible(name))
		return "", false
	}
	if _, ok := p.cfg.RiskProfiles[name]; ok {
		return name, true // a same-named profile is reused untouched
	}
	vals := riskPresets[i].values
	for _, k := range sortedKeys(vals) {
		p.plan.Sets = append(p.plan.Sets, config.SetEntry{Prop: "risk_profiles." + name + "." + k, Value: json.RawMessage(vals[k])})
	}
	return name, true
}

// memory returns the agent's memory.backend to write ("" : none to write, the global backend applies).
func (p *planner) memory(sel api.Selector) (string, bool) {
	const step = api.QuickstartStepMemory
	var kind string
	ref, isExisting, ok := p.choose(step, sel, &kind)
	if !ok {
		return "", false
	}
	if isExisting {
		kind, alias, _ := strings.Cut(ref, ".")
		if _, ok := p.cfg.Storage.Postgres[alias]; kind != "postgres" || !ok {
			p.fail(step, "", "cli-qs-no-storage", "ref", ref)
			return "", false
		}
		if p.cfg.Memory.Backend != ref {
			p.fail(step, "", "cli-qs-memory-backend", "backend", fmt.Sprintf("%q", p.cfg.Memory.Backend), "ref", fmt.Sprintf("%q", ref))
			return "", false
		}
		return "postgres", true
	}
	switch kind {
	case "sqlite", "markdown", "none":
		return kind, true
	case "postgres":
		p.fail(step, "", "cli-qs-postgres-needs-connection")
	case "qdrant", "lucid":
		p.fail(step, "", "cli-qs-memory-unsupported", "kind", kind)
	default:
		p.fail(step, "", "cli-qs-unknown-memory", "kind", visible(kind))
	}
	return "", false
}

// channels checks the channel selectors and stages the fresh ones; it returns the refs the agent binds.
func (p *planner) channels(sels []api.Selector) []string {
	refs := []string{}
	for i, sel := range sels {
		field := fmt.Sprintf("channels[%d]", i)
		switch sel.Mode {
		case api.SelectExisting:
			ref, err := existing(sel)
			if err != nil {
				p.failErr(api.QuickstartStepChannels, field, err)
				continue
			}
			if !slices.Contains(channelRefs(p.cfg), ref) {
				p.fail(api.QuickstartStepChannels, field, "cli-qs-no-channel", "ref", visible(ref))
				continue
			}
			if owner := boundTo(p.cfg, ref); owner != "" {
				p.fail(api.QuickstartStepChannels, field, "cli-qs-channel-bound", "ref", ref, "agent", owner)
				continue
			}
			refs = append(refs, ref)
		case api.SelectFresh:
			var ch api.QuickstartChannel
			if err := fresh(sel, &ch); err != nil {
				p.failErr(api.QuickstartStepChannels, field, err)
				continue
			}
			if ref, ok := p.freshChannel(field, ch, refs); ok {
				refs = append(refs, ref)
			}
		default:
			p.fail(api.QuickstartStepChannels, field, "cli-qs-bad-mode", "mode", fmt.Sprintf("%q", sel.Mode))
		}
	}
	return refs
}

// freshChannel stages one new channel; staged are the refs of this submission so far.
func (p *planner) freshChannel(field string, ch api.QuickstartChannel, staged []string) (string, bool) {
	const step = api.QuickstartStepChannels
	if strings.TrimSpace(ch.ChannelType) == "" || strings.TrimSpace(ch.Alias) == "" {
		p.fail(step, field, "cli-qs-channel-required")
		return "", false
	}
	if strings.ToLower(ch.ChannelType) != channelTelegram {
		p.fail(step, field+".channel_type", "cli-qs-channel-type", "type", visible(ch.ChannelType))
		return "", false
	}
	if err := config.CheckAlias(ch.Alias); err != nil {
		p.fail(step, field+".alias", "cli-qs-alias-invalid", "alias", fmt.Sprintf("%q", ch.Alias), "example", "telegram")
		return "", false
	}
	ref := channelTelegram + "." + ch.Alias
	if _, ok := p.cfg.Channels.Telegram[ch.Alias]; ok || slices.Contains(staged, ref) {
		p.fail(step, field+".alias", "cli-qs-alias-exists", "ref", ref)
		return "", false
	}
	for _, k := range sortedKeys(ch.Fields) {
		if k != "bot_token" {
			p.fail(step, field+".fields."+visible(k), "cli-qs-channel-field", "field", visible(k))
			return "", false
		}
	}
	token := ch.Fields["bot_token"]
	if !telegramToken(token) {
		p.fail(step, field+".fields.bot_token", "cli-qs-telegram-token")
		return "", false
	}
	prefix := "channels.telegram." + ch.Alias
	p.set(prefix+".enabled", true)
	p.set(prefix+".bot_token", token)
	return ref, true
}

const channelTelegram = "telegram"

// telegramToken is the shape of a Bot API token: the bot's numeric id, a colon, a secret of 30 or more
// URL-safe characters.
func telegramToken(s string) bool {
	id, secret, ok := strings.Cut(s, ":")
	if !ok || id == "" || len(secret) < 30 || len(s) > 128 {
		return false
	}
	for _, r := range id {
		if r < '0' || r > '9' {
			return false
		}
	}
	for _, r := range secret {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// channelRefs are the configured chat channels as <type>.<alias>, sorted.
func channelRefs(cfg *config.Config) []string {
	out := []string{}
	for _, alias := range sortedKeys(cfg.Channels.Telegram) {
		out = append(out, channelTelegram+"."+alias)
	}
	return out
}

// boundTo is the agent that answers on channel ref (by its ref or its bare type), "" when none.
func boundTo(cfg *config.Config, ref string) string {
	typ, _, _ := strings.Cut(ref, ".")
	for _, name := range sortedKeys(cfg.Agents) {
		if chs := cfg.Agents[name].Channels; slices.Contains(chs, ref) || slices.Contains(chs, typ) {
			return name
		}
	}
	return ""
}

func (p *planner) peerGroups(groups []api.QuickstartPeerGroup, agent string, staged []string) {
	for i, g := range groups {
		field := fmt.Sprintf("peer_groups[%d]", i)
		_, exists := p.cfg.PeerGroups[g.Name]
		switch {
		case strings.TrimSpace(g.Name) == "":
			p.fail(api.QuickstartStepChannels, field+".name", "cli-qs-peer-name-required")
		case strings.TrimSpace(g.Channel) == "":
			p.fail(api.QuickstartStepChannels, field+".channel", "cli-qs-peer-channel-required")
		case config.CheckAlias(g.Name) != nil:
			p.fail(api.QuickstartStepChannels, field+".name", "cli-qs-peer-name-invalid", "name", fmt.Sprintf("%q", g.Name))
		case !slices.Contains(staged, g.Channel) && !slices.Contains(channelRefs(p.cfg), g.Channel):
			p.fail(api.QuickstartStepChannels, field+".channel", "cli-qs-peer-unknown-channel", "group", visible(g.Name), "channel", visible(g.Channel))
		case exists:
			p.fail(api.QuickstartStepChannels, field+".name", "cli-qs-peer-exists", "group", g.Name)
		default:
			prefix := "peer_groups." + g.Name
			p.set(prefix+".channel", g.Channel)
			p.set(prefix+".agents", []string{agent})
			p.set(prefix+".external_peers", nonNil(g.ExternalPeers))
			if len(g.Ignore) > 0 {
				p.set(prefix+".ignore", g.Ignore)
			}
		}
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (p *planner) personality(files []api.QuickstartPersonalityFile) {
	for i, f := range files {
		field := fmt.Sprintf("personality_files[%d]", i)
		switch {
		case !slices.Contains(PersonalityFiles, f.Filename):
			p.fail(api.QuickstartStepAgent, field+".filename", "cli-qs-not-identity-file", "file", visible(f.Filename), "files", strings.Join(PersonalityFiles, ", "))
		case utf8.RuneCountInString(f.Content) > MaxPersonalityChars:
			p.fail(api.QuickstartStepAgent, field+".content", "cli-qs-content-too-long", "limit", MaxPersonalityChars)
		default:
			p.plan.Files = append(p.plan.Files, f)
		}
	}
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// visible bounds and quotes what a hostile client sent before it goes into a message.
func visible(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	q := fmt.Sprintf("%q", s)
	return q[1 : len(q)-1]
}
