// Package doctor inspects an install, with or without its daemon running, and reports what is wrong with it:
// each finding says what was seen and how to fix it. It only reads: it never creates a database, a lock or a
// key, and never repairs anything.
package doctor

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/i18n"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
)

// Categories of findings (upstream's category strings where it has one).
const (
	CategoryFiles     = "files"
	CategoryDatabase  = "database"
	CategorySessions  = "sessions"
	CategorySecrets   = "secrets"
	CategoryConfig    = "config"
	CategoryDaemon    = "daemon"
	CategoryProviders = "providers"
	CategoryGateway   = "gateway"
	CategorySop       = "sop"
	CategoryHeartbeat = "heartbeat"
	CategoryChannels  = "channels"
)

// DefaultProbeTimeout bounds the reachability probe of each provider.
const DefaultProbeTimeout = 5 * time.Second

// Options say which install to inspect and how.
type Options struct {
	Layout   install.Layout
	Endpoint string   // the native RPC endpoint (a socket path on Unix)
	Environ  []string // the environment config overrides are read from
	// HTTPClient probes providers; nil means a client with no proxy-independent tweaks (http.DefaultTransport).
	HTTPClient *http.Client
	// ProbeTimeout bounds each provider probe; 0 means DefaultProbeTimeout.
	ProbeTimeout time.Duration
	// SkipProviders leaves the network out (zeroclaw doctor --offline).
	SkipProviders bool
	// Gateway reports the running daemon's gateway (set when the doctor runs inside the daemon); nil leaves
	// the gateway check out.
	Gateway func() *api.GatewayStatus
	// HandshakeOnly reports the running daemon's connections that closed right after initialize (set inside
	// the daemon); nil leaves the client-version check out.
	HandshakeOnly func() *api.HandshakeOnly
	// MCPStatus reports the running daemon's MCP servers (set inside the daemon); nil checks the config only.
	MCPStatus func() []api.MCPServerStatus
	// Sop reports the running daemon's SOP runtime (set inside the daemon); nil, or a nil result, leaves the
	// SOP check out.
	Sop func() *api.SopStatus
	// Channels reports the running daemon's chat channels (set inside the daemon); nil: not checked.
	Channels func(ctx context.Context) []api.ChannelStatus
	// Locale writes the findings' messages and fixes (nil: English). IDs, categories and paths are never
	// translated.
	Locale *i18n.Localizer
	// Heartbeat reports the running daemon's heartbeat (set inside the daemon); nil leaves the check out (a
	// bad [heartbeat] is still a config finding).
	Heartbeat func() api.HeartbeatStatus
}

// Run inspects the install and returns every finding, in a fixed order of checks. It fails only when ctx ends
// before the providers' probes: the result then names the phase that timed out.
func Run(ctx context.Context, o Options) api.DoctorResult {
	if o.ProbeTimeout <= 0 {
		o.ProbeTimeout = DefaultProbeTimeout
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	r := &report{loc: o.Locale}
	live := checkDaemon(r, o)
	checkModes(r, o.Layout)
	checkDatabases(ctx, r, o.Layout)
	checkReceipts(ctx, r, o.Layout, live)
	cfg := checkConfig(r, o)
	if cfg != nil {
		checkBudget(r, o.Layout, cfg)
	}
	if o.Gateway != nil {
		if st := o.Gateway(); st != nil {
			checkGateway(r, *st)
		}
	}
	if o.HandshakeOnly != nil {
		checkClientVersion(r, o.HandshakeOnly())
	}
	if o.Sop != nil {
		if st := o.Sop(); st != nil {
			checkSop(r, *st)
		}
	}
	if o.Heartbeat != nil {
		checkHeartbeat(r, o.Heartbeat())
	}
	if o.Channels != nil {
		checkChannels(r, o.Channels(ctx))
	}
	if cfg != nil {
		checkMCP(r, cfg, o.MCPStatus)
	}
	if !o.SkipProviders && cfg != nil {
		if timedOut := checkProviders(ctx, r, o, cfg); timedOut {
			r.res.TimedOutPhase = "providers"
		}
	}
	if p := filepath.Join(o.Layout.StateDir(), "runtime-trace.jsonl"); exists(p) {
		r.res.LogPath = p
	}
	if r.res.Results == nil {
		r.res.Results = []api.DiagResult{}
	}
	return r.res
}

// OK reports whether a result holds no warning and no error.
func OK(res api.DoctorResult) bool { return res.Summary.Errors == 0 && res.Summary.Warnings == 0 }

// report collects findings and keeps the summary in step.
type report struct {
	res api.DoctorResult
	loc *i18n.Localizer
}

// t formats a message of the catalogue in the report's locale.
func (r *report) t(key string, args ...any) string { return r.loc.T(key, args...) }

func (r *report) add(d api.DiagResult) {
	switch d.Severity {
	case api.SeverityOK:
		r.res.Summary.OK++
	case api.SeverityWarn:
		r.res.Summary.Warnings++
	default:
		r.res.Summary.Errors++
	}
	r.res.Results = append(r.res.Results, d)
}

func (r *report) ok(category, id, msg string) {
	r.add(api.DiagResult{Severity: api.SeverityOK, Category: category, ID: id, Message: msg})
}

func (r *report) warn(category, id, path, msg, fix string) {
	r.add(api.DiagResult{Severity: api.SeverityWarn, Category: category, ID: id, Path: path, Message: msg, Fix: fix})
}

func (r *report) fail(category, id, path, msg, fix string) {
	r.add(api.DiagResult{Severity: api.SeverityError, Category: category, ID: id, Path: path, Message: msg, Fix: fix})
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
