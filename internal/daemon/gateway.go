package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/acp"
	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/auth"
	"github.com/zeroclaw-go/zeroclaw/internal/clock"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/gateway"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/logs"
	"github.com/zeroclaw-go/zeroclaw/internal/pairing"
	"github.com/zeroclaw-go/zeroclaw/internal/rpc"
	"github.com/zeroclaw-go/zeroclaw/internal/session"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
	"github.com/zeroclaw-go/zeroclaw/internal/workspace"
)

// openDevices opens data/devices.db; a daemon that cannot still pairs, without the device registry.
func openDevices(ctx context.Context, layout install.Layout, log *slog.Logger) *store.DeviceStore {
	ds, err := store.OpenDevices(ctx, filepath.Join(layout.DataDir, "devices.db"))
	if err != nil {
		log.Warn("device registry unavailable: paired devices will not be listed", "component", "store", "err", err)
		return nil
	}
	return ds
}

// newPairing builds the pairing domain over the config and the device registry.
func newPairing(ctx context.Context, cfg *config.Manager, devices *store.DeviceStore, clk clock.Clock, log *slog.Logger) (*pairing.Manager, error) {
	return pairing.New(ctx, pairing.Options{Config: cfg, Devices: devices, Clock: clk, Logger: log})
}

// metricsTee passes every runtime event to the log hub and to the gateway's metrics.
type metricsTee struct {
	hub *logs.Hub
	m   *gateway.Metrics
}

func (t metricsTee) Publish(e logs.Entry) {
	t.m.Observe(e)
	t.hub.Publish(e)
}

// startGateway builds the gateway over the same method table as the socket, binds [gateway] and rebinds it
// when a config change touches the bind. A bind failure is a warning: the socket is the daemon's primary
// surface (upstream fails the whole daemon instead).
func (d *daemon) startGateway(ctx context.Context, opts Options, layout install.Layout, events *logs.Hub, pm *pairing.Manager, m *gateway.Metrics, clk clock.Clock) {
	d.gw = gateway.New(gateway.Options{
		Daemon:    &gatewayDaemon{d: d, layout: layout, events: events, wsChat: &wsChat{m: d.sessions}},
		Pairing:   pm,
		Metrics:   m,
		Clock:     clk,
		Logger:    d.log,
		Spare:     d.conns,
		NewID:     opts.NewID,
		Listen:    opts.GatewayListen,
		Ready:     opts.GatewayReady,
		WSSListen: opts.WSSListen,
		WSSReady:  opts.WSSReady,
	})
	if opts.Ephemeral {
		// The one-shot daemon `zeroclaw agent` starts for itself serves its local clients only: no HTTP listener,
		// no pairing code. The server exists unbound so that shutdown is the same.
		return
	}
	// A code replaced after the global failure budget was spent reaches the owner as the first one does: on the
	// daemon's terminal, never over HTTP or in the log.
	pm.OnRotate(func(code string, failures int, window time.Duration) {
		if opts.Banner == nil || d.gw.Addr() == nil {
			return
		}
		fmt.Fprintf(opts.Banner, "Gateway pairing paused for %s after %d wrong pairing codes; the old code is void.\n", window, failures)
		printPairingBanner(opts.Banner, d.gw.Addr(), d.cfg.Current(), code)
	})
	// A change of the config (a reload, an edit) prunes devices whose token is gone and rebinds the listener
	// when host, port or TLS changed.
	d.cfg.OnChange(func(c *config.Config) {
		if err := pm.Reconcile(ctx); err != nil {
			d.log.Warn("device registry not reconciled", "component", "pairing", "err", err)
		}
		if err := d.gw.Apply(ctx, c); err != nil {
			d.log.Warn("gateway keeps its current listener", "component", "gateway", "err", err)
		}
		if err := d.gw.ApplyWSS(c); err != nil {
			d.log.Warn("wss keeps its current listener", "component", "gateway", "err", err)
		}
		// Every token removed (by hand, then a reload): the next device needs a code, as at start.
		if code, fresh, err := pm.EnsureFirstCode(); err != nil {
			d.log.Warn("no pairing code", "component", "pairing", "err", err)
		} else if fresh && opts.Banner != nil && d.gw.Addr() != nil {
			printPairingBanner(opts.Banner, d.gw.Addr(), c, code)
		}
	})
	if err := d.gw.ApplyWSS(d.cfg.Current()); err != nil {
		d.log.Warn("wss not served", "component", "gateway", "err", err)
	}
	if err := d.gw.Apply(ctx, d.cfg.Current()); err != nil {
		d.log.Warn("gateway not served", "component", "gateway", "err", err)
		return
	}
	if code := pm.PendingCode(); code != "" && opts.Banner != nil {
		printPairingBanner(opts.Banner, d.gw.Addr(), d.cfg.Current(), code)
	}
}

// gatewayDaemon is the daemon as the gateway serves it (gateway.Daemon): the same method table, config
// manager, session manager and protocol servers as the local endpoints. Its embedded wsChat runs /ws/chat.
type gatewayDaemon struct {
	d      *daemon
	layout install.Layout // the install root and data dir, for the file trees
	events *logs.Hub
	*wsChat
}

// Events is the runtime event log, for GET /api/events.
func (g *gatewayDaemon) Events() *logs.Hub { return g.events }

// AgentFiles is agent's workspace, the install (config, secrets, data) out of reach as in the tools' sandbox.
func (g *gatewayDaemon) AgentFiles(agent string) (gateway.FileTree, error) {
	dir, err := workspace.Dir(g.d.cfg.Current(), g.layout.Root, agent)
	if err != nil {
		return nil, fmt.Errorf("%w: unknown agent %q", gateway.ErrFileNotFound, agent)
	}
	return fileTree{workspace.Files{Dir: dir, Root: g.layout.Root, Data: g.layout.DataDir}}, nil
}

// sharedKept are the directories of shared/ that the install keeps (rmdir refuses them, as upstream's
// PROTECTED_SHARED_TOP_LEVEL): the skills store, skill bundles and knowledge.
var sharedKept = []string{"skills", "skill-bundles", "knowledge"}

// SharedFiles is <install>/shared/ (created when absent), the rest of the install out of reach.
func (g *gatewayDaemon) SharedFiles() (gateway.FileTree, error) {
	dir := filepath.Join(g.layout.Root, "shared")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%w: %w", gateway.ErrFileDenied, err)
	}
	return fileTree{workspace.Files{Dir: dir, Root: g.layout.Root, Data: g.layout.DataDir, Keep: sharedKept}}, nil
}

// fileTree is workspace.Files as the gateway's FileTree: its errors become the gateway's.
type fileTree struct{ f workspace.Files }

func (t fileTree) List(path string) ([]gateway.FileEntry, string, error) {
	ents, cleaned, err := t.f.List(path)
	out := make([]gateway.FileEntry, len(ents))
	for i, e := range ents {
		out[i] = gateway.FileEntry{Name: e.Name, Dir: e.Dir, Size: e.Size, Protected: e.Protected}
	}
	return out, cleaned, treeError(err)
}

func (t fileTree) Read(path string, limit int64) ([]byte, error) {
	b, err := t.f.Read(path, limit)
	return b, treeError(err)
}
func (t fileTree) Remove(path string) error   { return treeError(t.f.Remove(path)) }
func (t fileTree) Move(from, to string) error { return treeError(t.f.Move(from, to)) }
func (t fileTree) Mkdir(path string) error    { return treeError(t.f.Mkdir(path)) }
func (t fileTree) Rmdir(path string) error    { return treeError(t.f.Rmdir(path)) }

// treeError maps workspace's filesystem errors onto the gateway's.
func treeError(err error) error {
	for _, m := range []struct{ from, to error }{
		{workspace.ErrFsNotFound, gateway.ErrFileNotFound},
		{workspace.ErrFsDenied, gateway.ErrFileDenied},
		{workspace.ErrFsInvalidPath, gateway.ErrFileInvalid},
		{workspace.ErrFsNotEmpty, gateway.ErrFileNotEmpty},
	} {
		if errors.Is(err, m.from) {
			return fmt.Errorf("%w (%w)", m.to, err)
		}
	}
	return err
}

func (g *gatewayDaemon) Config() *config.Config { return g.d.cfg.Current() }

func (g *gatewayDaemon) Call(ctx context.Context, id gateway.Identity, method string, params json.RawMessage) (any, error) {
	return g.d.srv.Call(ctx, rpc.Caller{Principal: id.Principal, Resolve: id.Resolve, Label: id.Label,
		Transport: auth.TransportHTTP, Subject: id.Subject}, method, params)
}

func (g *gatewayDaemon) Reload(ctx context.Context) error {
	_, err := g.d.cfg.Reload(ctx)
	return err
}

func (g *gatewayDaemon) Shutdown() { g.d.requestStop() }

// Tools are every tool internal/tools implements (a turn is given those its agent can reach). With an agent,
// the servers are that agent's (and their ready tools are listed); without, every configured server, each
// with its state (one the manager does not run, as with mcp.enabled = false, is "stopped"), in config order.
func (g *gatewayDaemon) Tools(agent string) ([]gateway.ToolSpec, []api.MCPServerStatus) {
	specs := tools.Specs()
	var servers []api.MCPServerStatus
	if agent == "" {
		var live []api.MCPServerStatus
		if g.d.mcpClient != nil {
			live = g.d.mcpClient.Status()
		}
		servers = allMCPServers(g.d.cfg.Current(), live)
	}
	if cfg := g.d.cfg.Current(); agent != "" && g.d.mcpClient != nil {
		var names []string
		for _, s := range cfg.MCPServersForAgent(agent) {
			names = append(names, s.Name)
		}
		var mcpSpecs []tools.Spec
		mcpSpecs, servers = g.d.mcpClient.Peek(names)
		specs = append(specs, mcpSpecs...)
	}
	out := make([]gateway.ToolSpec, len(specs))
	for i, t := range specs {
		out[i] = gateway.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
	}
	return out, servers
}

func (g *gatewayDaemon) RunWebhook(ctx context.Context, caller *auth.Principal, agent, sessionID, message string) (string, error) {
	answer, err := g.d.sessions.RunUnattended(ctx, session.Unattended{Agent: agent, SessionID: sessionID, Prompt: message,
		Owner: caller.Name, Restricted: !caller.Admin, Grants: caller.Grants, Agents: caller.Agents, Tools: caller.Tools})
	if errors.Is(err, session.ErrNotOwned) {
		return "", fmt.Errorf("%w: %w", gateway.ErrSessionNotOwned, err)
	}
	if errors.Is(err, session.ErrAgentNotAllowed) {
		return "", fmt.Errorf("%w: %w", gateway.ErrAgentNotAllowed, err)
	}
	if te := (*session.TurnError)(nil); errors.As(err, &te) {
		if te.Outcome == api.OutcomeCancelled {
			return "", fmt.Errorf("%w: %s", gateway.ErrTurnCancelled, te.Detail)
		}
		return "", fmt.Errorf("%w: %s", gateway.ErrTurnFailed, te.Detail)
	}
	return answer, err
}

// ServeACP serves /acp over the same ACP server as the local endpoint.
func (g *gatewayDaemon) ServeACP(ctx context.Context, f jsonrpc.Framer, id gateway.Identity, agent string) {
	lim := g.d.limits()
	_ = g.d.acp.ServeFramer(ctx, f, acp.PeerInfo{UID: -1, Label: id.Label, Transport: auth.TransportHTTP,
		Resolve: id.Resolve, DefaultAgent: agent},
		acp.Limits{MaxFrameBytes: lim.MaxFrameBytes, FrameTimeout: lim.FrameTimeout, WriteTimeout: lim.WriteTimeout})
}

// ServeRPC serves [wss] over the same native server as the socket.
func (g *gatewayDaemon) ServeRPC(ctx context.Context, f jsonrpc.Framer, id gateway.Identity) {
	_ = g.d.srv.ServeFramer(ctx, f, rpc.PeerInfo{PID: -1, UID: -1, Label: id.Label, Transport: auth.TransportWSS,
		Resolve: id.Resolve}, g.d.limits())
}

// printPairingBanner shows the one-time code on the daemon's terminal (never in the log).
func printPairingBanner(w io.Writer, addr net.Addr, cfg *config.Config, code string) {
	scheme := "http"
	if cfg.Gateway.TLS.Enabled {
		scheme = "https"
	}
	url := fmt.Sprintf("%s://%s%s", scheme, addr, cfg.Gateway.PathPrefix)
	fmt.Fprintf(w, "Gateway pairing code: %s\n  pair with: curl -X POST -H 'X-Pairing-Code: %s' %s/pair\n", code, code, url)
}

// gatewayStatus is status.gateway: served at an address, not served (the bind error), or disabled (the
// ephemeral daemon `zeroclaw agent` starts serves its local clients only).
func (d *daemon) gatewayStatus(ephemeral bool) *api.GatewayStatus {
	if ephemeral {
		return gatewayDisabled
	}
	if d.gw != nil {
		if st := d.gw.Status(); st != nil {
			return st
		}
	}
	return gatewayStarting
}

var (
	gatewayDisabled = &api.GatewayStatus{State: api.GatewayDisabled, Error: "ephemeral daemon: only `zeroclaw daemon` serves the gateway"}
	gatewayStarting = &api.GatewayStatus{State: api.GatewayNotServed, Error: "the gateway has not started yet"}
)

// allMCPServers is every [[mcp.servers]] entry of cfg with its live status from live, "stopped" when it has
// none.
func allMCPServers(cfg *config.Config, live []api.MCPServerStatus) []api.MCPServerStatus {
	out := make([]api.MCPServerStatus, 0, len(cfg.MCP.Servers))
	for _, c := range cfg.MCP.Servers {
		st := api.MCPServerStatus{Name: c.Name, Transport: c.TransportOrDefault(), State: "stopped"}
		for _, l := range live {
			if strings.EqualFold(strings.TrimSpace(l.Name), strings.TrimSpace(c.Name)) {
				st = l
			}
		}
		out = append(out, st)
	}
	return out
}
