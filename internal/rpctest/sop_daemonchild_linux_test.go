//go:build linux

package rpctest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// childEnv names the socket the helper process dials; set only for the re-executed test binary.
const childEnv = "ZEROCLAW_TEST_SOP_CHILD"

// TestSopApproveFromDaemonChild: under approval_mode = "out_of_band_required", a process the daemon spawned
// (an agent's shell tool running `zeroclaw sop approve`) dials the socket as the operator's uid, yet its
// sops/approve and sops/decide count as the agent's and are refused with -32010; the run still waits. The
// same approval from a process that is not the daemon's descendant (this test's own connection: the daemon
// runs in-process) resolves the gate.
func TestSopApproveFromDaemonChild(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Fatal("the helper process ran the parent test")
	}
	cfgDir := filepath.Join(ShortTempDir(t), "install")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	base := sopInstall(t, cfgDir)
	d := StartOn(t, cfgDir, WithConfig(base+"approval_mode = \"out_of_band_required\"\n"))
	c := dialRC(t, d, "")
	var started api.SopRunResult
	c.mustCall(api.MethodSopsRun, api.SopRunParams{Name: "deploy"}, &started)
	var run api.SopRun
	c.mustCall(api.MethodSopsRunGet, api.SopRunIDParams{RunID: started.RunID}, &run)
	if run.Status != api.SopRunWaitingApproval {
		t.Fatalf("run = %+v, want waiting_approval", run)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestSopDaemonChildHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+d.Endpoint+"\n"+started.RunID)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	var codes []string
	for _, line := range strings.Split(string(out), "\n") {
		if s, ok := strings.CutPrefix(line, "RESPONSE "); ok {
			var f struct {
				ID    string `json:"id"`
				Error *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(s), &f); err != nil {
				t.Fatalf("helper response %q: %v", s, err)
			}
			if f.Error == nil {
				t.Fatalf("%s from the daemon's child succeeded: %s", f.ID, s)
			}
			if f.Error.Code != api.CodeAuthRequired || !strings.Contains(f.Error.Message, "out_of_band_required") {
				t.Fatalf("%s from the daemon's child: %s, want -32010 naming out_of_band_required", f.ID, s)
			}
			codes = append(codes, f.ID)
		}
	}
	if strings.Join(codes, ",") != "approve,decide" {
		t.Fatalf("helper answered %v, want approve and decide refused\n%s", codes, out)
	}
	c.mustCall(api.MethodSopsRunGet, api.SopRunIDParams{RunID: started.RunID}, &run)
	if run.Status != api.SopRunWaitingApproval || len(run.StepResults) != 0 {
		t.Fatalf("refused approvals changed the run: %+v", run)
	}
	var res api.SopResolveResult
	c.mustCall(api.MethodSopsApprove, api.SopResolveParams{RunID: started.RunID}, &res)
	if res.Outcome != api.SopOutcomeResumed {
		t.Fatalf("operator's approve = %+v", res)
	}
}

// TestSopDaemonChildHelper is the child process of TestSopApproveFromDaemonChild: it does nothing unless
// that test re-executed the binary with childEnv set. It dials the socket, initializes, asks sops/approve
// and sops/decide for the run, and prints each response.
func TestSopDaemonChildHelper(t *testing.T) {
	v := os.Getenv(childEnv)
	if v == "" {
		return
	}
	endpoint, runID, _ := strings.Cut(v, "\n")
	nc, err := net.Dial("unix", endpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	r := bufio.NewReader(nc)
	send := func(id, method string, params any) string {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if _, err := nc.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("%s: %v", method, err)
			}
			if strings.Contains(line, `"id":"`+id+`"`) {
				return strings.TrimSpace(line)
			}
		}
	}
	send("init", "initialize", map[string]any{"protocol_version": 1})
	fmt.Println("RESPONSE " + send("approve", api.MethodSopsApprove, api.SopResolveParams{RunID: runID}))
	fmt.Println("RESPONSE " + send("decide", api.MethodSopsDecide, map[string]any{"name": "deploy", "run_id": runID, "decision": "approve"}))
}
