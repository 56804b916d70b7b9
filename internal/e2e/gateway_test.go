package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The real binary: the daemon prints its pairing code at start (never in the log), `zeroclaw pair code` shows
// it, a device pairs over HTTP, `zeroclaw pair list` shows it and `zeroclaw pair revoke` locks it out.
func TestGatewayPairCLI(t *testing.T) {
	t.Parallel()
	cfg := "schema_version = 3\n\n[providers.models.echo.default]\nmodel = \"echo\"\n\n[agents.default]\nmodel_provider = \"echo.default\"\nrisk_profile = \"supervised\"\n\n[risk_profiles.supervised]\nlevel = \"supervised\"\n\n[permission_profiles.viewer]\ngrants = [\"status:read\"]\n\n[gateway]\nport = 0\n"
	h, root := homeWithConfig(t, cfg)
	d := start(t, env(h), "daemon")
	waitSocket(t, d, filepath.Join(root, "data", "daemon.sock"))
	banner := regexp.MustCompile(`Gateway pairing code: (\d{6})\n  pair with: curl -X POST -H 'X-Pairing-Code: \d{6}' (http://[0-9.:]+)/pair`)
	var m []string
	for deadline := time.Now().Add(10 * time.Second); m == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		m = banner.FindStringSubmatch(d.stderr.String())
	}
	if m == nil {
		t.Fatalf("no pairing banner on stderr:\n%s", d.stderr.String())
	}
	code, base := m[1], m[2]
	if strings.Count(d.stderr.String(), code) != 2 {
		t.Fatalf("the code appears elsewhere than the banner (the log?):\n%s", d.stderr.String())
	}
	out, errOut, rc := run(t, env(h), "", "pair", "code")
	if rc != 0 || strings.TrimSpace(out) != code {
		t.Fatalf("pair code: %d %q %q (banner %s)", rc, out, errOut, code)
	}
	// A code for a restricted device; an unknown profile is an error with a hint, naming the defined ones.
	out, errOut, rc = run(t, env(h), "", "pair", "code", "--profile", "viewer")
	if rc != 0 || len(strings.TrimSpace(out)) != 6 || strings.TrimSpace(out) == code || !strings.Contains(errOut, "profile viewer only") {
		t.Fatalf("pair code --profile viewer: %d %q %q", rc, out, errOut)
	}
	_, errOut, rc = run(t, env(h), "", "pair", "code", "--profile", "nope")
	if rc == 0 || !strings.Contains(errOut, `unknown permission profile "nope" (defined: viewer)`) || !strings.Contains(errOut, "Try: ") {
		t.Fatalf("pair code --profile nope: %d %q", rc, errOut)
	}
	// The owner asks again for an unrestricted code: a fresh one (the restricted one is replaced).
	out, _, _ = run(t, env(h), "", "pair", "code")
	code = strings.TrimSpace(out)

	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	req, _ := http.NewRequest("POST", base+"/pair", nil)
	req.Header.Set("X-Pairing-Code", code)
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body struct{ Token string }
	_ = json.NewDecoder(res.Body).Decode(&body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.HasPrefix(body.Token, "zc_") {
		t.Fatalf("pair: %d %+v", res.StatusCode, body)
	}
	status := func() int {
		req, _ := http.NewRequest("GET", base+"/api/status", nil)
		req.Header.Set("Authorization", "Bearer "+body.Token)
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	if s := status(); s != 200 {
		t.Fatalf("status with the token: %d", s)
	}

	out, _, rc = run(t, env(h), "", "pair", "list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if rc != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[1], "127.0.0.1") {
		t.Fatalf("pair list: %d\n%s", rc, out)
	}
	id := strings.Fields(lines[1])[0]
	if _, errOut, rc = run(t, env(h), "", "pair", "revoke", "nope"); rc == 0 || !strings.Contains(errOut, "not found") {
		t.Fatalf("revoke of an unknown device: %d %q", rc, errOut)
	}
	if out, _, rc = run(t, env(h), "", "pair", "revoke", id); rc != 0 || !strings.Contains(out, id) {
		t.Fatalf("pair revoke: %d %q", rc, out)
	}
	if s := status(); s != 401 {
		t.Fatalf("status after revoke: %d", s)
	}
}

// A gateway port held by another process is a warning: the daemon still serves its socket.
func TestGatewayPortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	cfg := fmt.Sprintf("schema_version = 3\n\n[gateway]\nport = %d\n", port)
	h, root := homeWithConfig(t, cfg)
	d := start(t, envOwnPort(h), "daemon")
	sock := filepath.Join(root, "data", "daemon.sock")
	waitSocket(t, d, sock)
	if pid := statusPID(t, sock); pid != d.cmd.Process.Pid {
		t.Fatalf("status pid %d, daemon %d", pid, d.cmd.Process.Pid)
	}
	// The warning is logged before the socket serves, but reaches d.stderr through a copying goroutine.
	eventually(t, 10*time.Second, "a warning about the taken port", func() bool {
		return strings.Contains(d.stderr.String(), "gateway not served") && strings.Contains(d.stderr.String(), "address already in use")
	})

	// status and doctor say so too, with the address and how to fix it.
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	out := runOK(t, envOwnPort(h), "", "status")
	if !strings.Contains(out, "gateway:     NOT SERVED at "+addr+": ") || !strings.Contains(out, "address already in use") {
		t.Fatalf("status does not say the gateway is not served:\n%s", out)
	}
	var st struct {
		PID     int `json:"pid"`
		Gateway struct {
			State, Addr, Error string
		} `json:"gateway"`
	}
	if err := json.Unmarshal([]byte(runOK(t, envOwnPort(h), "", "status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if st.PID != d.cmd.Process.Pid || st.Gateway.State != "not_served" || st.Gateway.Addr != addr || !strings.Contains(st.Gateway.Error, "address already in use") {
		t.Fatalf("status --json: %+v", st)
	}
	docOut, _, code := run(t, envOwnPort(h), "", "doctor", "--offline")
	fix := fmt.Sprintf("zeroclaw config set gateway.port %d", port+1)
	if code != 1 || !strings.Contains(docOut, "ERROR [gateway] the gateway is configured at "+addr+" but not served") ||
		!strings.Contains(docOut, "sport = :"+strconv.Itoa(port)) || !strings.Contains(docOut, fix) {
		t.Fatalf("doctor (exit %d) does not report the unserved gateway with its fix:\n%s", code, docOut)
	}

	// The fix doctor names works at once: a free port, and status shows the gateway served there.
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	freePort := free.Addr().(*net.TCPAddr).Port
	free.Close()
	runOK(t, envOwnPort(h), "", "config", "set", "gateway.port", strconv.Itoa(freePort))
	want := fmt.Sprintf("gateway:     served at http://127.0.0.1:%d\n", freePort)
	eventually(t, 10*time.Second, "status showing the gateway served", func() bool {
		return strings.Contains(runOK(t, envOwnPort(h), "", "status"), want)
	})
	if docOut, _, _ := run(t, envOwnPort(h), "", "doctor", "--offline"); !strings.Contains(docOut, "ok    [gateway] the gateway serves http://127.0.0.1:"+strconv.Itoa(freePort)) {
		t.Fatalf("doctor after the fix:\n%s", docOut)
	}
}

// pairWithBanner reads the pairing code the daemon d printed, pairs over POST /pair and returns the gateway's
// base URL and the token.
func pairWithBanner(t *testing.T, d *proc) (base, token string) {
	t.Helper()
	banner := regexp.MustCompile(`Gateway pairing code: (\d{6})\n  pair with: curl -X POST -H 'X-Pairing-Code: \d{6}' (http://[0-9.:]+)/pair`)
	var m []string
	for deadline := time.Now().Add(10 * time.Second); m == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		m = banner.FindStringSubmatch(d.stderr.String())
	}
	if m == nil {
		t.Fatalf("no pairing banner on stderr:\n%s", d.stderr.String())
	}
	req, _ := http.NewRequest("POST", m[2]+"/pair", nil)
	req.Header.Set("X-Pairing-Code", m[1])
	res, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct{ Token string }
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || res.StatusCode != 200 {
		t.Fatalf("pair: %d %v", res.StatusCode, err)
	}
	return m[2], body.Token
}

// The one-shot daemon `zeroclaw agent` starts (--ephemeral) serves its local clients only: it binds no gateway and
// prints no pairing code, while a normal daemon on the same config does both.
func TestEphemeralDaemonServesNoGateway(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	cfg := fmt.Sprintf("schema_version = 3\n\n[gateway]\nport = %d\n", port)
	h, root := homeWithConfig(t, cfg)
	sock := filepath.Join(root, "data", "daemon.sock")
	for _, ephemeral := range []bool{true, false} {
		args := []string{"daemon"}
		if ephemeral {
			args = append(args, "--ephemeral")
		}
		d := start(t, envOwnPort(h), args...)
		waitSocket(t, d, sock)
		statusPID(t, sock) // the daemon has finished starting
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 2*time.Second)
		if c != nil {
			_ = c.Close()
		}
		served := err == nil
		if served == ephemeral || strings.Contains(d.stderr.String(), "pairing code") == ephemeral {
			t.Fatalf("ephemeral=%v: gateway served %v (dial: %v); stderr:\n%s", ephemeral, served, err, d.stderr.String())
		}
		signal(t, d, syscall.SIGTERM)
		d.wait(t, 15*time.Second)
	}
}
