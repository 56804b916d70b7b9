package service

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// label is upstream's launchd label.
const label = "com.zeroclaw.daemon"

const unitName = label + ".plist"

func defaultUnitDir(home string) string { return filepath.Join(home, "Library", "LaunchAgents") }

// render is the launchd agent: started at login (RunAtLoad) and restarted unless it exited cleanly
// (KeepAlive SuccessfulExit=false), so `zeroclaw stop` stays stopped. Its stderr log goes to
// <config dir>/logs/daemon.log.
func render(o Options) (string, error) {
	esc := func(s string) string {
		return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;").Replace(s)
	}
	logFile := filepath.Join(o.ConfigDir, "logs", "daemon.log")
	return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>` + label + `</string>
  <key>ProgramArguments</key>
  <array>
    <string>` + esc(o.Exe) + `</string>
    <string>daemon</string>
    <string>--config-dir</string>
    <string>` + esc(o.ConfigDir) + `</string>
  </array>
  <key>RunAtLoad</key>
  <true/>
  <key>KeepAlive</key>
  <dict>
    <key>SuccessfulExit</key>
    <false/>
  </dict>
  <key>StandardErrorPath</key>
  <string>` + esc(logFile) + `</string>
</dict>
</plist>
`, nil
}

func (o Options) launchctl(ctx context.Context, args ...string) (string, error) {
	out, err := o.run(ctx, "launchctl", args...)
	if err != nil {
		return out, fmt.Errorf("launchctl %s: %v: %s (run it from your own login session, not over sudo)", strings.Join(args, " "), err, out)
	}
	return out, nil
}

func afterInstall(_ context.Context, o Options) []string {
	if err := os.MkdirAll(filepath.Join(o.ConfigDir, "logs"), 0o700); err != nil {
		return []string{"the log directory could not be made: " + err.Error()}
	}
	return []string{"start it (and at each login) with: zeroclaw service start"}
}

func beforeUninstall(ctx context.Context, o Options, path string) []string {
	if _, err := o.launchctl(ctx, "unload", "-w", path); err != nil {
		return []string{"could not unload the agent: " + err.Error()}
	}
	return []string{"agent unloaded"}
}

func afterUninstall(context.Context, Options) []string { return nil }

func manage(ctx context.Context, o Options, path, action string) (string, error) {
	switch action {
	case "start":
		if _, err := o.launchctl(ctx, "load", "-w", path); err != nil {
			return "", err
		}
		return o.launchctl(ctx, "start", label)
	case "stop":
		return o.launchctl(ctx, "stop", label)
	default:
		out, err := o.launchctl(ctx, "list")
		if err != nil {
			return "", err
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.HasSuffix(strings.TrimSpace(line), label) {
				return "loaded: " + strings.TrimSpace(line) + " (PID, last exit status, label)", nil
			}
		}
		return "not loaded (" + label + ")", nil
	}
}
