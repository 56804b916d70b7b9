package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/i18n"
	"github.com/zeroclaw-go/zeroclaw/internal/visible"
)

func runStatus(ctx context.Context, env Env, args []string) error {
	fs := newDaemonFlags(env, "status", "[--config-dir DIR] [--json]")
	asJSON := fs.Bool("json", false, "print the raw status result as JSON")
	c, err := fs.connect(ctx, env, args, connectRunning)
	if err != nil {
		return err
	}
	defer c.Close()
	var st api.StatusResult
	if err := c.Call(ctx, api.MethodStatus, nil, &st); err != nil {
		return err
	}
	if *asJSON {
		b, _ := json.MarshalIndent(st, "", "  ")
		fmt.Fprintln(env.Stdout, string(b))
		return nil
	}
	loc := env.Locale()
	fmt.Fprintln(env.Stdout, loc.T("cli-status-running", "build", st.BuildVersion, "protocol", st.ProtocolVersion, "server", st.ServerVersion))
	rows := []labelled{
		{"cli-status-pid", fmt.Sprint(st.PID)},
		{"cli-status-uptime", fmt.Sprintf("%ds", st.UptimeSecs)},
		{"cli-status-endpoint", st.LocalIPCEndpoint},
		{"cli-status-config-dir", st.ConfigDir},
		{"cli-status-config-file", st.ConfigFile + " (" + st.ConfigKind + ")"},
		{"cli-status-data-dir", st.DataDir},
		{"cli-status-sessions", loc.T("cli-status-sessions-active", "count", st.ActiveSessions)},
	}
	if st.Gateway != nil {
		rows = append(rows, labelled{"cli-status-gateway", visible.Sanitize(gatewayLine(loc, *st.Gateway))})
	}
	if st.Heartbeat != nil {
		rows = append(rows, labelled{"cli-status-heartbeat", visible.Sanitize(heartbeatLine(loc, *st.Heartbeat))})
	}
	if st.Sop != nil {
		rows = append(rows, labelled{"cli-status-sop", visible.Sanitize(sopLine(loc, *st.Sop))})
	}
	if st.Storage != nil {
		rows = append(rows, labelled{"cli-status-storage", visible.Sanitize(storageLine(loc, *st.Storage))})
	}
	printLabelled(env.Stdout, loc, "  ", 1, statusLabels, rows)
	if st.Storage != nil {
		for _, p := range st.Storage.Peers {
			key := "cli-status-peer"
			if p.Holder == st.Storage.Holder {
				key = "cli-status-peer-self"
			}
			fmt.Fprintln(env.Stdout, "    "+visible.Sanitize(loc.T(key, "host", p.Host, "pid", p.PID, "version", p.Version, "seen", p.SeenAt)))
		}
	}
	return nil
}

// storageLine words status.storage for the terminal.
func storageLine(loc *i18n.Localizer, s api.StorageStatus) string {
	if s.Error != "" {
		return s.Backend + ": " + s.Error
	}
	return loc.T("cli-status-storage-line", "backend", s.Backend, "peers", len(s.Peers), "claims", s.Claims, "leases", s.Leases)
}

// statusLabels are the labels of status's lines, all of them: their column is as wide as the widest.
var statusLabels = []string{"cli-status-pid", "cli-status-uptime", "cli-status-endpoint", "cli-status-config-dir",
	"cli-status-config-file", "cli-status-data-dir", "cli-status-sessions", "cli-status-gateway", "cli-status-heartbeat", "cli-status-sop", "cli-status-storage"}

// labelled is one "label: value" line of a record: the label's catalogue key and the value as printed.
type labelled struct{ label, value string }

// printLabelled prints rows as "label: value" lines, after indent, the values in one column: gap spaces after
// the widest of all's labels (in loc's words), so the column stays put whichever rows are shown.
func printLabelled(w io.Writer, loc *i18n.Localizer, indent string, gap int, all []string, rows []labelled) {
	width := 0
	for _, k := range all {
		width = max(width, utf8.RuneCountInString(loc.T(k)))
	}
	for _, r := range rows {
		l := loc.T(r.label)
		fmt.Fprintf(w, "%s%s%s%s\n", indent, l, strings.Repeat(" ", width-utf8.RuneCountInString(l)+gap), r.value)
	}
}

// sopLine words status.sop for the terminal; runs that are not durable say so in capitals.
func sopLine(loc *i18n.Localizer, s api.SopStatus) string {
	counts := loc.T("cli-status-sop-counts", "loaded", s.Loaded, "disabled", s.Disabled, "active", s.ActiveRuns, "waiting", s.WaitingRuns)
	storage := loc.T("cli-status-sop-volatile")
	switch {
	case s.Durable:
		storage = loc.T("cli-status-sop-durable", "path", s.Path)
	case s.Warning != "":
		storage = loc.T("cli-status-sop-volatile-warning", "warning", s.Warning)
	}
	return loc.T("cli-status-sop-line", "counts", counts, "storage", storage)
}

// gatewayLine words status.gateway for the terminal.
func gatewayLine(loc *i18n.Localizer, g api.GatewayStatus) string {
	switch g.State {
	case api.GatewayServed:
		if g.Error != "" {
			return loc.T("cli-status-gateway-served-stuck", "url", g.URL, "error", g.Error)
		}
		return loc.T("cli-status-gateway-served", "url", g.URL)
	case api.GatewayDisabled:
		return loc.T("cli-status-gateway-disabled", "reason", g.Error)
	}
	return loc.T("cli-status-gateway-not-served", "addr", g.Addr, "error", g.Error)
}

// heartbeatLine is status.heartbeat in one line: off and why, or the agent, the interval and the last outcome.
func heartbeatLine(loc *i18n.Localizer, h api.HeartbeatStatus) string {
	if h.Problem != "" {
		return loc.T("cli-status-heartbeat-off", "problem", h.Problem)
	}
	line := loc.T("cli-status-heartbeat-every", "minutes", h.IntervalMinutes, "agent", h.Agent)
	if h.LastStatus != "" {
		line += ", " + loc.T("cli-status-heartbeat-last", "status", h.LastStatus)
	}
	if h.ConsecutiveFailures > 0 {
		line += " " + loc.T("cli-status-heartbeat-failures", "count", h.ConsecutiveFailures)
	}
	if h.DeadmanAlertAt != "" {
		line += ", " + loc.T("cli-status-heartbeat-deadman")
	}
	if h.NextSlotAt != "" {
		line += ", " + loc.T("cli-status-heartbeat-next", "at", h.NextSlotAt)
	}
	return line
}
