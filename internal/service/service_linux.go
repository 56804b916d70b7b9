package service

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

const unitName = "zeroclaw.service"

func defaultUnitDir(home string) string { return filepath.Join(home, ".config", "systemd", "user") }

// render is the systemd user unit. Restart=on-failure: a crash is restarted, `zeroclaw stop` (a clean exit)
// stays stopped. WantedBy=default.target: enabled, it starts with the user's session. No dependency on
// network-online.target: that is a system unit a user manager cannot order against or pull in (the daemon
// serves its socket without a network, and provider requests retry).
func render(o Options) (string, error) {
	exe, err := systemdArg(o.Exe)
	if err != nil {
		return "", err
	}
	dir, err := systemdArg(o.ConfigDir)
	if err != nil {
		return "", err
	}
	return "[Unit]\n" +
		"Description=zeroclaw agent runtime daemon\n" +
		"\n" +
		"[Service]\n" +
		"Type=simple\n" +
		"ExecStart=" + exe + " daemon --config-dir " + dir + "\n" +
		"Restart=on-failure\n" +
		"RestartSec=3\n" +
		"\n" +
		"[Install]\n" +
		"WantedBy=default.target\n", nil
}

// systemdArg quotes one ExecStart word: specifiers (%) and variables ($) are escaped, a word with spaces,
// quotes or backslashes is double-quoted with C-style escapes. Control characters cannot be written at all.
func systemdArg(s string) (string, error) {
	if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", fmt.Errorf("service: %q holds a control character, which a unit file cannot carry", s)
	}
	s = strings.ReplaceAll(s, "%", "%%")
	s = strings.ReplaceAll(s, "$", "$$")
	if !strings.ContainsAny(s, " \t\"'\\;") {
		return s, nil
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`, nil
}

func (o Options) systemctl(ctx context.Context, args ...string) (string, error) {
	out, err := o.run(ctx, "systemctl", append([]string{"--user"}, args...)...)
	if err != nil {
		return out, fmt.Errorf("systemctl --user %s: %v: %s%s", strings.Join(args, " "), err, out, busHint(out))
	}
	return out, nil
}

// busHint explains the usual failure: no user service manager to talk to (a root shell, a container, a session
// not started by systemd).
func busHint(out string) string {
	if strings.Contains(out, "bus") || strings.Contains(out, "XDG_RUNTIME_DIR") {
		return "\n(no systemd user manager is reachable from here: run this from your own login session, where " +
			"XDG_RUNTIME_DIR is set; `loginctl enable-linger $USER` keeps the service running without a login; " +
			"or run `zeroclaw daemon` directly)"
	}
	return ""
}

func afterInstall(ctx context.Context, o Options) []string {
	if _, err := o.systemctl(ctx, "daemon-reload"); err != nil {
		return []string{"unit written, but systemd was not told: " + err.Error()}
	}
	return []string{"systemd reloaded; start it (and at each login) with: zeroclaw service start"}
}

func beforeUninstall(ctx context.Context, o Options, _ string) []string {
	if _, err := o.systemctl(ctx, "disable", "--now", unitName); err != nil {
		return []string{"could not stop and disable the service: " + err.Error()}
	}
	return []string{"service stopped and disabled"}
}

func afterUninstall(ctx context.Context, o Options) []string {
	if _, err := o.systemctl(ctx, "daemon-reload"); err != nil {
		return []string{"systemd was not told: " + err.Error()}
	}
	return nil
}

func manage(ctx context.Context, o Options, _ string, action string) (string, error) {
	switch action {
	case "start":
		if _, err := o.systemctl(ctx, "daemon-reload"); err != nil {
			return "", err
		}
		// enable --now: started now and at every login.
		return o.systemctl(ctx, "enable", "--now", unitName)
	case "stop":
		return o.systemctl(ctx, "stop", unitName)
	default:
		out, err := o.run(ctx, "systemctl", "--user", "status", "--no-pager", unitName)
		if err != nil && out == "" {
			return "", fmt.Errorf("systemctl --user status %s: %v%s", unitName, err, busHint(err.Error()))
		}
		if err != nil && busHint(out) != "" {
			return "", fmt.Errorf("systemctl --user status %s: %s%s", unitName, out, busHint(out))
		}
		return out, nil // status exits non-zero for a stopped service: its report is still the answer
	}
}
