package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/clock"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/session"
	"github.com/zeroclaw-go/zeroclaw/internal/sop"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/engine"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/runstore"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/sopcron"
	"github.com/zeroclaw-go/zeroclaw/internal/sop/trigger"
)

// sopRuntime is the SOP engine with what feeds it: the run store, the definitions of sops_dir (reloaded when
// the config changes), the maintenance tick and the cron source. It exists only when [sop] sops_dir is set.
type sopRuntime struct {
	eng   *engine.Engine
	store runstore.Store
	cron  *sopcron.Source
	mqtt  []*trigger.MQTT // one per enabled channels.mqtt.<alias>
	fs    *trigger.FS     // the SOPs' filesystem triggers
	dir   string
	log   *slog.Logger

	cancel context.CancelFunc
	wg     sync.WaitGroup // the tick and the cron source
	closed sync.Once

	mu      sync.Mutex // guards catalog
	catalog *sop.Catalog

	loadMu sync.Mutex // one load at a time: two racing loads could apply the older read last
}

// openSop builds the SOP runtime after the stores and the session manager, or returns nil when the runtime is
// off. Nothing here stops the daemon: runs.db that cannot be opened or read leaves runs in memory (the file
// untouched), loudly: a warning now, status.sop.warning and a doctor error.
func openSop(ctx context.Context, layout install.Layout, home string, cfg *config.Manager, sessions *session.Manager,
	clk clock.Clock, log *slog.Logger) *sopRuntime {
	c := cfg.Current().SOP
	log = log.With("component", "sop")
	if !c.RuntimeEnabled() {
		cfg.OnChange(func(c *config.Config) {
			if c.SOP.RuntimeEnabled() {
				log.Warn("sop.sops_dir is set now: the SOP runtime starts at the next daemon start (zeroclaw stop, then zeroclaw daemon)")
			}
		})
		return nil
	}
	base, cancel := context.WithCancel(context.WithoutCancel(ctx))
	rt := &sopRuntime{dir: sop.ResolveDir(layout.Root, c.SOPsDir, home), log: log, cancel: cancel}
	build := func(st runstore.Store, status engine.StoreStatus) error {
		rt.store = st
		rt.eng = engine.New(base, engine.Config{Store: st, StoreStatus: status, Turns: stepTurns{sessions},
			Settings: sopSettings(c), Clock: clk, Logger: log})
		rt.load(c)
		return rt.eng.Restore(ctx)
	}
	st, status := openRunStore(ctx, layout, home, c, log)
	if err := build(st, status); err != nil {
		rt.eng.Close()
		_ = st.Close()
		log.Error("SOP: runs.db could not be read; falling back to in-memory: its runs are not resumed (the file is left as it is)", "err", err)
		status = engine.StoreStatus{Backend: "memory", Path: status.Path, Reason: "runs.db could not be read: " + err.Error()}
		if err := build(runstore.NewMemory(), status); err != nil {
			log.Error("SOP: the in-memory run store failed to start", "err", err)
		}
	}
	rt.cron = sopcron.New(sopcron.Options{Dispatcher: rt.eng, Expressions: rt.cronExpressions, Clock: clk, Logger: log})
	rt.startMQTT(base, cfg.Current(), c, log)
	rt.fs = trigger.NewFS(trigger.FSOptions{Root: layout.Root, Home: home, Channels: cfg.Current().Channels.Filesystem,
		Patterns: rt.fsPatterns, Dispatcher: rt.eng, PayloadMax: c.UntrustedPayloadMaxBytes, Logger: log})
	rt.wg.Add(4)
	go func() {
		defer rt.wg.Done()
		if err := rt.fs.Run(base); err != nil {
			log.Warn("filesystem SOP watcher stopped", "err", err)
		}
	}()
	go func() { defer rt.wg.Done(); rt.cron.Run(base) }()
	go func() { defer rt.wg.Done(); rt.tick(base, clk, cfg) }()
	go func() { defer rt.wg.Done(); rt.watch(base, clk, cfg) }()
	cfg.OnChange(func(c *config.Config) {
		if !c.SOP.RuntimeEnabled() {
			log.Warn("sop.sops_dir is unset now: the SOP runtime stops at the next daemon start; its runs go on until then")
			return
		}
		if d := sop.ResolveDir(layout.Root, c.SOP.SOPsDir, home); d != rt.dir {
			log.Warn("sop.sops_dir changed: the new directory is read at the next daemon start", "serving", rt.dir, "configured", d)
		}
		rt.eng.SetSettings(sopSettings(c.SOP))
		rt.load(c.SOP)
	})
	st2 := rt.eng.Status()
	log.Info("SOP runtime started", "dir", rt.dir, "store", st2.Store.Backend, "durable", st2.Store.Durable,
		"loaded", st2.Loaded, "restored_runs", st2.RestoredRuns, "interrupted_steps", st2.Interrupted)
	return rt
}

// startMQTT runs one MQTT trigger source per enabled channels.mqtt.<alias> (a config it refuses is logged and
// left out; the others run). Their topic filters are the loaded SOPs' mqtt triggers plus the channel's own.
func (rt *sopRuntime) startMQTT(ctx context.Context, cfg *config.Config, c config.SOPConfig, log *slog.Logger) {
	aliases := make([]string, 0, len(cfg.Channels.MQTT))
	for a := range cfg.Channels.MQTT {
		aliases = append(aliases, a)
	}
	sort.Strings(aliases)
	for _, alias := range aliases {
		mc := cfg.Channels.MQTT[alias]
		if !mc.Enabled {
			continue
		}
		m, err := trigger.NewMQTT(trigger.MQTTOptions{Alias: alias, Config: mc, Topics: rt.mqttTopics, Dispatcher: rt.eng,
			PayloadMax: c.UntrustedPayloadMaxBytes, Logger: log})
		if err != nil {
			log.Warn("MQTT SOP listener not started", "channel", alias, "err", err)
			continue
		}
		rt.mqtt = append(rt.mqtt, m)
		rt.wg.Add(1)
		go func() {
			defer rt.wg.Done()
			if err := m.Run(ctx); err != nil {
				log.Warn("MQTT SOP listener stopped", "channel", alias, "err", err)
			}
		}()
	}
}

// fsPatterns are the path patterns of the loaded SOPs' filesystem triggers.
func (rt *sopRuntime) fsPatterns() []string {
	var out []string
	for _, d := range rt.eng.Definitions() {
		for _, t := range d.Triggers {
			if t.Type == sop.SourceFilesystem && t.Path != "" {
				out = append(out, t.Path)
			}
		}
	}
	return out
}

// mqttTopics are the topic filters of the loaded SOPs' mqtt triggers.
func (rt *sopRuntime) mqttTopics() []string {
	var out []string
	for _, d := range rt.eng.Definitions() {
		for _, t := range d.Triggers {
			if t.Type == sop.SourceMQTT && t.Topic != "" {
				out = append(out, t.Topic)
			}
		}
	}
	return out
}

// openRunStore opens runs.db, or the memory store when persist_runs is off, run_store_backend is memory, or
// runs.db fails to open (then loudly: a warning here, status.sop.warning, a doctor error).
func openRunStore(ctx context.Context, layout install.Layout, home string, c config.SOPConfig, log *slog.Logger) (runstore.Store, engine.StoreStatus) {
	if !c.PersistRuns || c.RunStoreBackend == "memory" {
		return runstore.NewMemory(), engine.StoreStatus{Backend: "memory"}
	}
	dir := runStateDir(layout, home, c.RunStateDir)
	st, err := runstore.OpenSQLite(ctx, dir)
	if err != nil {
		log.Warn("SOP: run-store init failed; falling back to in-memory: runs will not survive a restart", "err", err)
		return runstore.NewMemory(), engine.StoreStatus{Backend: "memory", Path: filepath.Join(dir, runstore.FileName), Reason: err.Error()}
	}
	return st, engine.StoreStatus{Backend: "sqlite", Durable: true, Path: filepath.Join(dir, runstore.FileName)}
}

// runStateDir is [sop] run_state_dir ("~" expanded, relative to the install root), else <data_dir>/sop.
func runStateDir(layout install.Layout, home, v string) string {
	v = strings.TrimSpace(v)
	switch {
	case v == "":
		return filepath.Join(layout.DataDir, "sop")
	case v == "~":
		return home
	case strings.HasPrefix(v, "~/") && home != "":
		return filepath.Join(home, v[2:])
	case filepath.IsAbs(v):
		return filepath.Clean(v)
	}
	return filepath.Join(layout.Root, v)
}

func sopSettings(c config.SOPConfig) engine.Settings {
	s := engine.Defaults()
	s.DefaultExecutionMode = string(sop.ParseExecutionMode(c.DefaultExecutionMode))
	s.MaxConcurrentTotal = c.MaxConcurrentTotal
	s.ApprovalTimeout = time.Duration(c.ApprovalTimeoutSecs) * time.Second
	s.ApprovalTimeoutAction = c.ApprovalTimeoutAction
	s.ApprovalMode = c.ApprovalMode
	s.MaxFinishedRuns = c.MaxFinishedRuns
	s.MaxStepVisits = c.MaxStepVisits
	s.MaxStepRetries = c.MaxStepRetries
	s.PayloadMaxBytes = c.UntrustedPayloadMaxBytes
	s.InputGuard = c.UntrustedInputGuard
	s.GuardSensitivity = c.UntrustedGuardSense
	s.ScopeEnforce = c.StepScopeEnforce
	s.SchemaEnforce = c.StepSchemaEnforce
	s.MandatoryTools = append([]string(nil), c.StepMandatoryTools...)
	s.Groups = map[string][]string{}
	for name, g := range c.Approval.Groups {
		s.Groups[name] = append([]string(nil), g.Members...)
	}
	s.Policies = map[string]engine.Policy{}
	for name, p := range c.Approval.Policies {
		s.Policies[name] = engine.Policy{RequiredGroup: p.RequiredGroup, Quorum: p.Quorum}
	}
	return s
}

// load (re)reads sops_dir into the engine; running runs keep the definition they started with.
func (rt *sopRuntime) load(c config.SOPConfig) {
	rt.loadMu.Lock()
	defer rt.loadMu.Unlock()
	cat := sop.LoadDir(rt.dir, sop.LoadOptions{DefaultMode: sop.ParseExecutionMode(c.DefaultExecutionMode)})
	for _, d := range cat.Disabled {
		rt.log.Warn("Failed to load SOP", "dir", d.Dir, "reason", d.Reason)
	}
	rt.mu.Lock()
	rt.catalog = cat
	rt.mu.Unlock()
	rt.eng.Reload(cat.Sops)
	if rt.cron != nil {
		rt.cron.Changed()
	}
	for _, m := range rt.mqtt {
		m.Changed()
	}
	if rt.fs != nil {
		rt.fs.Changed()
	}
}

// Reload re-reads the SOP files (after an authoring save or a config reload).
func (rt *sopRuntime) Reload(c config.SOPConfig) { rt.load(c) }

func (rt *sopRuntime) cronExpressions() []string {
	var out []string
	for _, d := range rt.eng.Definitions() {
		for _, t := range d.Triggers {
			if t.Type == sop.SourceCron {
				out = append(out, t.Expression)
			}
		}
	}
	return out
}

// sopsWatchEvery is how often sops_dir is checked for changed SOP files.
const sopsWatchEvery = 2 * time.Second

// watch reloads the SOPs when a file of sops_dir changes (a SOP added, edited or removed by hand or by the
// authoring methods). It compares names, sizes and modification times: a few stats per SOP every
// sopsWatchEvery, no watcher to run out of. Running runs keep the definition they started with.
func (rt *sopRuntime) watch(ctx context.Context, clk clock.Clock, cfg *config.Manager) {
	last := fingerprint(rt.dir)
	for {
		t := clk.NewTimer(sopsWatchEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if fp := fingerprint(rt.dir); fp != last {
			last = fp
			rt.log.Info("SOP files changed; reloading", "dir", rt.dir)
			rt.load(cfg.Current().SOP)
		}
	}
}

// fingerprint is what watch compares: each <dir>/<name>/SOP.{toml,md} with its size and mtime, at most
// sop.MaxSops directories (what LoadDir reads).
func fingerprint(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "error: " + err.Error()
	}
	var b strings.Builder
	for i, e := range entries {
		if i >= sop.MaxSops {
			break
		}
		for _, f := range []string{sop.ManifestFile, sop.StepsFile} {
			if st, err := os.Stat(filepath.Join(dir, e.Name(), f)); err == nil {
				fmt.Fprintf(&b, "%s/%s %d %d\n", e.Name(), f, st.Size(), st.ModTime().UnixNano())
			}
		}
	}
	return b.String()
}

// tick runs the engine's maintenance every maintenance_interval_secs (0: none) until ctx ends.
func (rt *sopRuntime) tick(ctx context.Context, clk clock.Clock, cfg *config.Manager) {
	for {
		secs := cfg.Current().SOP.MaintenanceIntervalSecs
		d := time.Duration(secs) * time.Second
		if secs <= 0 {
			d = time.Minute // re-read the interval; no maintenance while it is 0
		}
		t := clk.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
			if secs > 0 {
				rt.eng.Tick(ctx)
			}
		}
	}
}

// status is status.sop.
func (rt *sopRuntime) status() *api.SopStatus {
	if rt == nil {
		return nil
	}
	st := rt.eng.Status()
	rt.mu.Lock()
	disabled := len(rt.catalog.Disabled)
	rt.mu.Unlock()
	out := &api.SopStatus{Store: st.Store.Backend, Durable: st.Store.Durable, Warning: st.Store.Reason, Loaded: st.Loaded,
		Disabled: disabled, ActiveRuns: st.ActiveRuns, WaitingRuns: st.WaitingRuns}
	if st.Store.Durable || st.Store.Reason != "" {
		out.Path = st.Store.Path
	}
	return out
}

// engine is the SOP engine; nil when the runtime is off.
func (rt *sopRuntime) engine() *engine.Engine {
	if rt == nil {
		return nil
	}
	return rt.eng
}

// close stops the triggers, lets the step turns in flight finish until ctx ends (a turn cut after that stays
// in flight in runs.db and is marked interrupted at the next start, as after a crash), then closes the store.
// Safe on nil and twice.
func (rt *sopRuntime) close(ctx context.Context) {
	if rt == nil {
		return
	}
	rt.closed.Do(func() {
		rt.cancel()
		rt.wg.Wait()
		rt.eng.Shutdown(ctx)
		if err := rt.store.Close(); err != nil {
			rt.log.Warn("closing the SOP run store", "err", err)
		}
	})
}

// stepTurns runs SOP steps as unattended turns: the step agent's tools, risk profile, budgets and costs apply,
// and a call the profile would ask about is refused, never approved by nobody (upstream's #9841 review).
type stepTurns struct{ m *session.Manager }

func (t stepTurns) RunStep(ctx context.Context, r engine.StepRequest) (engine.StepOutput, error) {
	out, err := t.m.RunUnattended(ctx, session.Unattended{Agent: r.Agent, SessionID: r.SessionID, Prompt: r.Prompt,
		AllowedTools: r.AllowedTools, ExcludedTools: r.ExcludedTools})
	return engine.StepOutput{Output: out, Agent: r.Agent}, err
}
