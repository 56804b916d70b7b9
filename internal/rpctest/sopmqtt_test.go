package rpctest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// brokerFor runs a real mosquitto on a free loopback port for the test and returns host:port.
func brokerFor(t *testing.T) string {
	t.Helper()
	const bin = "/usr/sbin/mosquitto"
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("mosquitto is required (apt-get install mosquitto; .ci/run installs it): %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	conf := filepath.Join(t.TempDir(), "mosquitto.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, "listener %d 127.0.0.1\nallow_anonymous true\npersistence false\n", port), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-c", conf)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("mosquitto did not listen on %s", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The daemon subscribes to the SOPs' MQTT topics on a real broker (channels.mqtt): a message whose topic and
// condition match starts a run that is driven to completed; one whose condition fails starts nothing. The SOP
// is loaded from <install>/shared/sops at start (upstream #6534: the MQTT path once saw no SOPs at all).
func TestSopMQTTTrigger(t *testing.T) {
	t.Parallel()
	addr := brokerFor(t)
	cfg := agentConfig(echoTOML, "echo.default", "full", sopSection+fmt.Sprintf(
		"\n[channels.mqtt.home]\nenabled = true\nbroker_url = \"mqtt://%s\"\nclient_id = \"zc-sop-test\"\nqos = 1\n", addr))
	d := Start(t, WithConfig(cfg))
	writeSop(t, d.ConfigDir, "cpu", "[sop]\nname = \"cpu\"\ndescription = \"hot CPU\"\nexecution_mode = \"auto\"\nagent = \"a\"\nmax_concurrent = 4\n\n"+
		"[[triggers]]\ntype = \"mqtt\"\ntopic = \"alerts/+/cpu\"\ncondition = \"$.value > 85\"\n", "## Steps\n1. **Check** — Look at the host.\n")
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	d = StartOn(t, d.ConfigDir)
	c := dialRC(t, d, "")
	pub := paho.NewClient(paho.NewClientOptions().AddBroker("tcp://" + addr).SetClientID("pub-" + t.Name()))
	if tok := pub.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("publisher: %v", tok.Error())
	}
	defer pub.Disconnect(100)
	runs := func() []map[string]any {
		var res struct {
			Runs []map[string]any `json:"runs"`
		}
		c.mustCall(api.MethodSopsRuns, map[string]any{"sop": "cpu"}, &res)
		return res.Runs
	}
	// The daemon subscribes after it connects: publish until the first matching message gets through.
	deadline := time.Now().Add(20 * time.Second)
	for len(runs()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no run from a matching MQTT message")
		}
		if tok := pub.Publish("alerts/db1/cpu", 1, false, `{"value":10}`); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
			t.Fatal(tok.Error())
		}
		if tok := pub.Publish("alerts/web1/cpu", 1, false, `{"value":97}`); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
			t.Fatal(tok.Error())
		}
		time.Sleep(50 * time.Millisecond)
	}
	for {
		rs := runs()
		done := true
		for _, r := range rs {
			done = done && r["status"] == "completed" && r["trigger_source"] == "mqtt"
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("mqtt runs %v", rs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, r := range runs() {
		id, _ := r["run_id"].(string)
		raw, werr := c.call(api.MethodSopsRunGet, map[string]any{"run_id": id})
		if werr != nil {
			t.Fatal(werr)
		}
		if s := string(raw); !strings.Contains(s, `"topic":"alerts/web1/cpu"`) || !strings.Contains(s, `\"value\":97`) {
			t.Fatalf("a run from a message the condition refuses, or the wrong one: %.300s", s)
		}
	}
}

// A filesystem trigger watching a directory of the install starts a run when a matching file appears there,
// driven to completed; a file the pattern does not match starts nothing.
func TestSopFilesystemTrigger(t *testing.T) {
	t.Parallel()
	d := Start(t, WithConfig(agentConfig(echoTOML, "echo.default", "full", sopSection)))
	inbox := filepath.Join(d.ConfigDir, "inbox")
	if err := os.MkdirAll(inbox, 0o700); err != nil {
		t.Fatal(err)
	}
	writeSop(t, d.ConfigDir, "orders", fmt.Sprintf("[sop]\nname = \"orders\"\ndescription = \"new orders\"\nexecution_mode = \"auto\"\nagent = \"a\"\nmax_concurrent = 4\n\n"+
		"[[triggers]]\ntype = \"filesystem\"\npath = %q\nevents = [\"created\"]\n", inbox+"/*.csv"), "## Steps\n1. **Import** — Import the file.\n")
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	d = StartOn(t, d.ConfigDir)
	c := dialRC(t, d, "")
	runs := func() []map[string]any {
		var res struct {
			Runs []map[string]any `json:"runs"`
		}
		c.mustCall(api.MethodSopsRuns, map[string]any{"sop": "orders"}, &res)
		return res.Runs
	}
	// The watch is set up as the daemon starts: write new files until the first one is seen.
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; len(runs()) == 0; i++ {
		if time.Now().After(deadline) {
			t.Fatal("no run from a new file in the watched directory")
		}
		if err := os.WriteFile(filepath.Join(inbox, fmt.Sprintf("notes-%d.txt", i)), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(inbox, fmt.Sprintf("orders-%d.csv", i)), []byte("a,b\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for {
		rs := runs()
		done := true
		for _, r := range rs {
			done = done && r["status"] == "completed" && r["trigger_source"] == "filesystem"
		}
		if done {
			for _, r := range rs {
				raw, _ := c.call(api.MethodSopsRunGet, map[string]any{"run_id": r["run_id"]})
				if s := string(raw); !strings.Contains(s, ".csv") || strings.Contains(s, "notes-") {
					t.Fatalf("a run from the wrong file: %.300s", s)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("filesystem runs %v", rs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
