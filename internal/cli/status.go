package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
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
	fmt.Fprintf(env.Stdout, "zeroclaw daemon %s (protocol %d of zeroclaw %s) running\n", st.BuildVersion, st.ProtocolVersion, st.ServerVersion)
	fmt.Fprintf(env.Stdout, "  pid:         %d\n", st.PID)
	fmt.Fprintf(env.Stdout, "  uptime:      %ds\n", st.UptimeSecs)
	fmt.Fprintf(env.Stdout, "  endpoint:    %s\n", st.LocalIPCEndpoint)
	fmt.Fprintf(env.Stdout, "  config dir:  %s\n", st.ConfigDir)
	fmt.Fprintf(env.Stdout, "  config file: %s (%s)\n", st.ConfigFile, st.ConfigKind)
	fmt.Fprintf(env.Stdout, "  data dir:    %s\n", st.DataDir)
	fmt.Fprintf(env.Stdout, "  sessions:    %d active\n", st.ActiveSessions)
	if st.Gateway != nil {
		fmt.Fprintf(env.Stdout, "  gateway:     %s\n", visible.Sanitize(gatewayLine(*st.Gateway)))
	}
	if st.Heartbeat != nil {
		fmt.Fprintf(env.Stdout, "  heartbeat:   %s\n", visible.Sanitize(heartbeatLine(*st.Heartbeat)))
	}
	if st.Sop != nil {
		fmt.Fprintf(env.Stdout, "  sop:         %s\n", visible.Sanitize(sopLine(*st.Sop)))
	}
	if st.Storage != nil {
		fmt.Fprintf(env.Stdout, "  storage:     %s\n", visible.Sanitize(storageLine(*st.Storage)))
		for _, p := range st.Storage.Peers {
			me := ""
			if p.Holder == st.Storage.Holder {
				me = " (this daemon)"
			}
			fmt.Fprintf(env.Stdout, "    peer:      %s\n", visible.Sanitize(fmt.Sprintf("%s pid %d, version %s, seen %s%s", p.Host, p.PID, p.Version, p.SeenAt, me)))
		}
	}
	return nil
}

// storageLine words status.storage for the terminal.
func storageLine(s api.StorageStatus) string {
	if s.Error != "" {
		return s.Backend + ": " + s.Error
	}
	return fmt.Sprintf("%s, shared: %d peer(s) seen, %d claim(s) running, %d lease(s) held", s.Backend, len(s.Peers), s.Claims, s.Leases)
}

// sopLine words status.sop for the terminal; runs that are not durable say so in capitals.
func sopLine(s api.SopStatus) string {
	line := fmt.Sprintf("%d loaded, %d disabled, %d active runs (%d waiting for approval); ", s.Loaded, s.Disabled, s.ActiveRuns, s.WaitingRuns)
	switch {
	case s.Durable:
		return line + "runs kept in " + s.Path
	case s.Warning != "":
		return line + "RUNS IN MEMORY ONLY, LOST AT RESTART: " + s.Warning + " (zeroclaw doctor says how to fix it)"
	}
	return line + "runs in memory only (as configured)"
}

// gatewayLine words status.gateway for the terminal.
func gatewayLine(g api.GatewayStatus) string {
	switch g.State {
	case api.GatewayServed:
		if g.Error != "" {
			return "served at " + g.URL + " (a reload could not move it: " + g.Error + ")"
		}
		return "served at " + g.URL
	case api.GatewayDisabled:
		return "disabled (" + g.Error + ")"
	}
	return "NOT SERVED at " + g.Addr + ": " + g.Error + " (zeroclaw doctor says how to fix it)"
}

// heartbeatLine is status.heartbeat in one line: off and why, or the agent, the interval and the last outcome.
func heartbeatLine(h api.HeartbeatStatus) string {
	if h.Problem != "" {
		return "off: " + h.Problem
	}
	line := fmt.Sprintf("every %d min as %s", h.IntervalMinutes, h.Agent)
	if h.LastStatus != "" {
		line += ", last slot " + h.LastStatus
	}
	if h.ConsecutiveFailures > 0 {
		line += fmt.Sprintf(" (%d failed in a row)", h.ConsecutiveFailures)
	}
	if h.DeadmanAlertAt != "" {
		line += ", dead-man alert raised"
	}
	if h.NextSlotAt != "" {
		line += ", next slot " + h.NextSlotAt
	}
	return line
}
