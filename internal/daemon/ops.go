package daemon

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/clock"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/cost"
	"github.com/zeroclaw-go/zeroclaw/internal/doctor"
	"github.com/zeroclaw-go/zeroclaw/internal/i18n"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/logs"
	"github.com/zeroclaw-go/zeroclaw/internal/provider"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// newLogHub builds the runtime event log (data/state/runtime-trace.jsonl), its persistence read from the live
// [observability] and every event scrubbed of the live config's secrets. Event ids are always random: they
// must not consume the ids tests inject for sessions and turns.
func newLogHub(layout install.Layout, cfg *config.Manager, clk clock.Clock, ringFrames int, log *slog.Logger) *logs.Hub {
	h := logs.NewHub(logs.Options{
		Path: filepath.Join(layout.StateDir(), "runtime-trace.jsonl"),
		Persistence: func() logs.Persistence {
			o := cfg.Current().Observability
			return logs.Persistence{Mode: o.LogPersistence, MaxEntries: o.RollingMaxEntries(), MaxBytes: o.LogPersistenceMaxBytes,
				RotateDaily: o.LogPersistenceRotateDaily, MaxFiles: o.LogPersistenceRetentionMax}
		},
		Clock: clk, Version: api.BuildVersion(), Scrub: secretScrubber(cfg.Current), RingFrames: ringFrames,
		Logger: log,
	})
	// Config changes are evidence too: which generation, never the values.
	cfg.OnChange(func(*config.Config) {
		h.Publish(logs.Entry{Category: logs.CategorySystem, Action: "save", Outcome: logs.OutcomeSuccess,
			Message: "config changed", Attributes: map[string]any{"generation": cfg.Generation()}})
	})
	return h
}

// newCostTracker prices provider requests into the ledger and checks the [cost] budgets.
func newCostTracker(ledger *store.CostLedger, cfg *config.Manager, clk clock.Clock, newID func() string, h *logs.Hub,
	recorded func(model string, in, out int64, usd float64)) *cost.Tracker {
	return cost.NewTracker(cost.Options{Ledger: ledger, Config: cfg.Current, Clock: clk, NewID: newID, Logs: h, Recorded: recorded})
}

// secretScrubber scrubs text of the secret values of the config in force (rebuilt when the config changes) and
// of anything shaped like a credential.
func secretScrubber(current func() *config.Config) func(string) string {
	var (
		mu    sync.Mutex
		last  *config.Config
		scrub func(string) string
	)
	return func(text string) string {
		c := current()
		mu.Lock()
		if c != last || scrub == nil {
			last, scrub = c, provider.Scrubber(config.SecretValues(c))
		}
		f := scrub
		mu.Unlock()
		return f(text)
	}
}

// doctorFor runs the doctor on this install from inside the daemon (doctor/run).
func doctorFor(layout install.Layout, endpoint string, environ []string, gw func() *api.GatewayStatus, handshakes func() *api.HandshakeOnly,
	sop func() *api.SopStatus, mcpStatus func() []api.MCPServerStatus, hb func() api.HeartbeatStatus,
	channels func(context.Context) []api.ChannelStatus, locale func(string) *i18n.Localizer) func(context.Context, api.DoctorRunParams) api.DoctorResult {
	return func(ctx context.Context, p api.DoctorRunParams) api.DoctorResult {
		return doctor.Run(ctx, doctor.Options{Layout: layout, Endpoint: endpoint, Environ: environ, SkipProviders: p.Offline, Gateway: gw,
			HandshakeOnly: handshakes, Sop: sop, MCPStatus: mcpStatus, Heartbeat: hb, Channels: channels, Locale: locale(p.Locale)})
	}
}

// localeFor returns the daemon's localizer for a request: the locale it asks for, else config's locale, else
// the daemon's environment (LC_ALL, LC_MESSAGES, LANG), else English. The catalogue is the binary's with the
// install's data/ftl overrides, read once at start.
func localeFor(catalog func() *i18n.Catalog, current func() *config.Config, environ []string) func(string) *i18n.Localizer {
	return func(asked string) *i18n.Localizer {
		cat := catalog()
		if m := i18n.Match(asked); m != "" {
			return cat.For(m)
		}
		if m := i18n.Match(current().Locale); m != "" {
			return cat.For(m)
		}
		return cat.For(i18n.Detect(func(k string) string { return getenv(environ, k) }))
	}
}

// getenv looks a variable up in environ (the last assignment wins).
func getenv(environ []string, key string) string {
	for i := len(environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(environ[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}
