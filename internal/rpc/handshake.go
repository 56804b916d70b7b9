package rpc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/auth"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
)

// initialize binds the connection (protocol.md §3). A failure keeps the previous binding.
func (s *Server) initialize(ctx context.Context, p *Peer, raw json.RawMessage) (any, error) {
	var params api.InitializeParams
	err := router.DecodeParams(raw, &params)
	if err != nil {
		return nil, err
	}
	advertised := serverVersion(s.config())
	version := api.ProtocolVersion
	if params.ProtocolVersion != nil {
		version = *params.ProtocolVersion
	}
	if version != api.ProtocolVersion {
		return nil, jsonrpc.NewError(api.CodeVersionMismatch,
			fmt.Sprintf("Protocol version mismatch: server=%d, client=%d", api.ProtocolVersion, version),
			api.VersionMismatchData{Reason: "protocol_version", Client: version,
				ServerSupported: []int{api.ProtocolVersion}, ServerVersion: advertised})
	}
	var token func(*config.Config) *auth.Principal
	if params.AuthToken != nil {
		if token, err = s.tokenResolver(ctx, *params.AuthToken); err != nil {
			return nil, err
		}
	}
	principal, err := principalFrom(s.config(), p.Info, s.opts.Info.UID, token)
	if err != nil {
		return nil, err
	}
	tuiID := params.TUIID
	if tuiID == "" {
		tuiID = s.opts.NewTUIID()
	}
	var env map[string]string
	if principal.Admin && p.Info.Transport.Local() {
		env = params.Env
	}
	p.mu.Lock()
	p.initialized = true
	p.initAt = s.opts.Clock.Now()
	p.principal = principal
	p.token = token
	p.tuiID = tuiID
	p.elicitation = declaresElicitationForm(params.ClientCapabilities)
	p.env = env
	p.mu.Unlock()
	var ext []string
	// Binary chunks only where uploads are served (local transports) and the framer carries raw bytes.
	binary := declaresBinaryChunks(params.ClientCapabilities) && p.Info.Transport.Local() && p.conn != nil && p.conn.CanReadPayload()
	p.binaryChunks.Store(binary)
	if binary {
		ext = append(ext, api.ExtBinaryUploadChunks)
	}
	return api.InitializeResult{
		ProtocolVersion:      api.ProtocolVersion,
		ServerVersion:        advertised,
		ProtocolVersionCamel: api.ProtocolVersion,
		ServerVersionCamel:   advertised,
		BuildVersion:         api.BuildVersion(),
		ServerPID:            s.opts.Info.PID,
		TUIID:                tuiID,
		PrincipalID:          principalID(principal),
		Capabilities:         s.Capabilities(),
		Commands:             api.TUICommands(),
		Extensions:           ext,
	}, nil
}

// declaresBinaryChunks reports whether clientCapabilities.binary_upload_chunks is true.
func declaresBinaryChunks(caps json.RawMessage) bool {
	if len(caps) == 0 {
		return false
	}
	var c struct {
		Binary bool `json:"binary_upload_chunks"`
	}
	return json.Unmarshal(caps, &c) == nil && c.Binary
}

// principalID is the principal's wire name (protocol.md §3), as upstream's conformance suite reads it:
// "user:<name>" for a [users] entry, "shared-operator" for the daemon's own uid, "device:<id>" for a paired
// device.
func principalID(pr *auth.Principal) string {
	switch {
	case pr.Name == auth.OperatorName:
		return "shared-operator"
	case pr.Roster:
		return "user:" + pr.Name
	}
	return pr.Name
}

// declaresElicitationForm reports whether clientCapabilities.elicitation.form is present.
func declaresElicitationForm(caps json.RawMessage) bool {
	if len(caps) == 0 {
		return false
	}
	var c struct {
		Elicitation *struct {
			Form json.RawMessage `json:"form"`
		} `json:"elicitation"`
	}
	if json.Unmarshal(caps, &c) != nil || c.Elicitation == nil {
		return false
	}
	return len(c.Elicitation.Form) > 0 && string(c.Elicitation.Form) != "null"
}

type noParams struct{}

// status answers from an encoded result kept while what it reports stays the same: the live sessions, the
// uptime's whole seconds and the build version (the rest is fixed for the daemon's life). Encoding the result
// was most of a status call's work once the rest was cut.
//
// The install's paths (config_dir, config_file, local_ipc_endpoint, data_dir, the SOP store's path) go to an
// admin principal only; any other caller (a restricted device, another local user) gets the fields empty, so
// upstream's clients still parse the result and learn nothing of the owner's file system. Such a caller's
// active_sessions and session_ids count only the live sessions it may act on.
func (s *Server) status(_ context.Context, p *Peer, _ *noParams) (*jsonrpc.Encoded, error) {
	paths := p != nil && p.Principal() != nil && p.Principal().Admin
	var ids []string
	if s.opts.Sessions != nil {
		if paths {
			ids = s.opts.Sessions.ActiveIDs() // a fresh sorted slice, nil when none
		} else if p != nil {
			ids = s.opts.Sessions.ActiveIDsOf(p.owner()) // only its own: not the owner's session ids
		}
	}
	uptime := int64(s.opts.Clock.Now().Sub(s.opts.Info.StartedAt) / time.Second)
	version := api.BuildVersion()
	var gw *api.GatewayStatus
	if s.opts.Gateway != nil {
		gw = s.opts.Gateway()
	}
	var sop *api.SopStatus
	if s.opts.Sop != nil {
		sop = s.opts.Sop()
	}
	var hb *api.HeartbeatStatus
	if s.opts.Heartbeat != nil {
		if st := s.opts.Heartbeat.Status(); st.Enabled || st.Problem != "" { // absent while simply off, as sop
			hb = &st
		}
	}
	var chans []api.ChannelBrief
	if s.opts.ChannelStates != nil {
		chans = s.opts.ChannelStates()
	}
	var storage *api.StorageStatus
	if s.opts.Storage != nil {
		storage = s.opts.Storage()
	}
	advertised := serverVersion(s.config())
	if !paths {
		return s.statusRedacted(ids, uptime, version, gw, sop, hb, chans)
	}
	if c := s.statusCache.Load(); c != nil && c.uptime == uptime && c.version == version && c.advertised == advertised && slices.Equal(c.ids, ids) &&
		equalGateway(c.gateway, gw) && equalSop(c.sop, sop) && equalHeartbeat(c.hb, hb) && slices.Equal(c.channels, chans) && c.storage == storage {
		return c.enc, nil
	}
	info := s.opts.Info
	res := api.StatusResult{
		ServerVersion:    advertised,
		ProtocolVersion:  api.ProtocolVersion,
		ActiveSessions:   len(ids),
		SessionIDs:       ids,
		ConfigDir:        info.ConfigDir,
		ConfigFile:       info.ConfigFile,
		ConfigKind:       info.ConfigKind,
		LocalIPCEndpoint: info.Endpoint,
		BuildVersion:     version,
		PID:              info.PID,
		UptimeSecs:       uptime,
		DataDir:          info.DataDir,
		Gateway:          gw,
		Sop:              sop,
		Heartbeat:        hb,
		Channels:         chans,
		Storage:          storage,
	}
	if res.SessionIDs == nil {
		res.SessionIDs = []string{} // "session_ids":[], not null
	}
	enc, err := jsonrpc.Encode(res)
	if err != nil {
		return nil, err
	}
	s.statusCache.Store(&statusCache{uptime: uptime, version: version, advertised: advertised, ids: ids, gateway: gw, sop: sop, hb: hb, channels: chans, storage: storage, enc: enc})
	return enc, nil
}

// statusRedacted is status without the install's paths, for a caller that is not an admin (not cached: such
// callers are rare and the cache holds the owner's answer).
func (s *Server) statusRedacted(ids []string, uptime int64, version string, gw *api.GatewayStatus, sop *api.SopStatus,
	hb *api.HeartbeatStatus, chans []api.ChannelBrief) (*jsonrpc.Encoded, error) {
	if sop != nil && sop.Path != "" {
		cp := *sop
		cp.Path = ""
		sop = &cp
	}
	if ids == nil {
		ids = []string{}
	}
	return jsonrpc.Encode(api.StatusResult{ServerVersion: serverVersion(s.config()), ProtocolVersion: api.ProtocolVersion,
		ActiveSessions: len(ids), SessionIDs: ids, ConfigKind: s.opts.Info.ConfigKind, BuildVersion: version,
		PID: s.opts.Info.PID, UptimeSecs: uptime, Gateway: gw, Sop: sop, Heartbeat: hb, Channels: chans})
}

// statusCache is an encoded status result and what it was built from.
type statusCache struct {
	uptime     int64
	version    string
	advertised string // server_version
	hb         *api.HeartbeatStatus
	ids        []string
	gateway    *api.GatewayStatus
	sop        *api.SopStatus
	channels   []api.ChannelBrief
	storage    *api.StorageStatus
	enc        *jsonrpc.Encoded
}

func equalGateway(a, b *api.GatewayStatus) bool {
	return a == b || (a != nil && b != nil && *a == *b)
}

func equalSop(a, b *api.SopStatus) bool {
	return a == b || (a != nil && b != nil && *a == *b)
}

func (s *Server) health(ctx context.Context, _ *Peer, _ *noParams) (api.HealthResult, error) {
	comps := map[string]api.ComponentHealth{
		"rpc": {Status: "ok", Detail: strconv.Itoa(s.peerCount()) + " connections"},
	}
	if m := s.opts.ConfigManager; m != nil {
		c := api.ComponentHealth{Status: "ok", Detail: fmt.Sprintf("generation %d", m.Generation())}
		if n := len(m.Warnings()); n > 0 {
			c.Status, c.Detail = "warning", fmt.Sprintf("generation %d, %d warning(s) in config.toml", m.Generation(), n)
		}
		comps["config"] = c
	}
	if m := s.opts.Sessions; m != nil {
		comps["sessions"] = api.ComponentHealth{Status: "ok", Detail: fmt.Sprintf("%d live", len(m.ActiveIDs()))}
	}
	if s.opts.Channels != nil {
		for _, c := range s.opts.Channels(ctx) {
			h := api.ComponentHealth{Status: "ok", Detail: c.State}
			if !c.Healthy {
				h.Status = "error"
				if c.LastError != "" {
					h.Detail = c.State + ": " + c.LastError
				}
			}
			if n := c.Counts["out:unconfirmed"]; n > 0 && h.Status == "ok" {
				h.Status, h.Detail = "warning", fmt.Sprintf("%s, %d repl(ies) unconfirmed after a crash", c.State, n)
			}
			comps["channel:"+c.ID] = h
		}
	}
	if s.opts.Heartbeat != nil {
		if h, ok := heartbeatHealth(s.opts.Heartbeat.Status()); ok {
			comps["heartbeat"] = h
		}
	}
	if s.opts.Storage != nil {
		if st := s.opts.Storage(); st != nil {
			// Counts only: /health is open, and peers' host names are not its business.
			h := api.ComponentHealth{Status: "ok", Detail: fmt.Sprintf("%s: %d peer(s), %d claim(s) running, %d lease(s) held",
				st.Backend, len(st.Peers), st.Claims, st.Leases)}
			if st.Error != "" {
				h.Status, h.Detail = "error", st.Backend+": "+st.Error
			}
			comps["storage"] = h
		}
	}
	return api.HealthResult{Status: "ok", UptimeSecs: int64(s.opts.Clock.Now().Sub(s.opts.Info.StartedAt) / time.Second), Components: comps}, nil
}

func (s *Server) tuiList(_ context.Context, _ *Peer, _ *noParams) (api.TUIListResult, error) {
	out := api.TUIListResult{TUIs: []api.TUIInfo{}}
	for _, p := range s.Peers() { // in the order they connected
		if !p.Initialized() {
			continue
		}
		out.TUIs = append(out.TUIs, api.TUIInfo{
			TUIID:           p.TUIID(),
			ConnectedAt:     p.ConnectedAt.UTC().Format(time.RFC3339),
			ConnectedAtUnix: p.ConnectedAt.Unix(),
			PeerLabel:       p.Info.Label,
			Transport:       string(p.Info.Transport),
		})
	}
	return out, nil
}

func (s *Server) shutdown(_ context.Context, _ *Peer, _ *noParams) (api.ShutdownResult, error) {
	if s.opts.Shutdown != nil {
		s.opts.Shutdown()
	}
	return api.ShutdownResult{ShuttingDown: true}, nil
}

func (s *Server) config() *config.Config {
	if s.opts.Config == nil {
		return nil
	}
	return s.opts.Config()
}

// newTUIID is a fresh client id as upstream makes them: "tui_" and 8 hex digits.
func newTUIID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "tui_" + hex.EncodeToString(b[:])
}
