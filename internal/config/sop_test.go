package config

import (
	"strings"
	"testing"
)

func TestSOPDefaultsAndValidation(t *testing.T) {
	cfg, _, err := LoadBytes("/x/config.toml", DefaultTOML(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.SOP
	if s.RuntimeEnabled() || s.DefaultExecutionMode != "supervised" || s.MaxConcurrentTotal != 4 || s.ApprovalTimeoutSecs != 300 ||
		s.RunStoreBackend != "sqlite" || !s.PersistRuns || s.MaxStepVisits != 256 || s.MaxStepRetries != 2 ||
		s.UntrustedPayloadMaxBytes != 8192 || len(s.StepMandatoryTools) != 3 || s.UntrustedGuardSense != 0.7 {
		t.Fatalf("defaults: %+v", s)
	}
	ok := string(DefaultTOML()) + "\n[sop]\nsops_dir = \"shared/sops\"\nrun_store_backend = \"memory\"\n" +
		"[channels.mqtt.home]\nenabled = true\nbroker_url = \"mqtt://127.0.0.1:1883\"\nclient_id = \"zc\"\n" +
		"[channels.filesystem.inbox]\nenabled = true\npaths = [\"/srv/inbox\"]\n"
	cfg, _, err = LoadBytes("/x/config.toml", []byte(ok), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.SOP.RuntimeEnabled() || cfg.Channels.MQTT["home"].QoS != 1 || cfg.Channels.MQTT["home"].KeepAliveSecs != 30 ||
		!cfg.Channels.Filesystem["inbox"].Recursive || cfg.Channels.Filesystem["inbox"].DebounceMS != 500 || len(cfg.Channels.Filesystem["inbox"].Events) != 4 {
		t.Fatalf("entries' defaults: %+v %+v", cfg.Channels.MQTT, cfg.Channels.Filesystem)
	}
	for _, c := range []struct{ add, want string }{
		{"[sop]\nrun_store_backend = \"postgres\"\n", `sop.run_store_backend: must be sqlite or memory, got "postgres"`},
		{"[sop]\napproval_mode = \"anyone\"\n", "sop.approval_mode: must be both, out_of_band_required or agent_tool"},
		{"[sop]\napproval_timeout_action = \"ignore\"\n", "sop.approval_timeout_action"},
		{"[sop]\nmax_step_visits = -1\n", "sop.max_step_visits: must not be negative"},
		{"[sop.approval.policies.prod]\nrequired_group = \"ops\"\n", `group "ops" is not defined`},
		{"[sop.approval.policies.prod]\nrequest_route = \"nowhere\"\n", "request_route"},
		{"[channels.mqtt.a]\nenabled = true\nbroker_url = \"tcp://x\"\nclient_id = \"c\"\n", "broker_url must start with 'mqtt://' or 'mqtts://'"},
		{"[channels.mqtt.a]\nenabled = true\nbroker_url = \"mqtt://x\"\nclient_id = \"c\"\nqos = 3\n", "qos must be 0, 1, or 2"},
		{"[channels.mqtt.a]\nenabled = true\nbroker_url = \"mqtts://x\"\nclient_id = \"c\"\n", "use_tls is false"},
		{"[channels.mqtt.a]\nenabled = true\nbroker_url = \"mqtt://x\"\n", "client_id must not be empty"},
		{"[channels.filesystem.a]\npaths = [\"relative\"]\n", "must be an absolute directory"},
		{"[channels.filesystem.a]\nevents = [\"touched\"]\n", `unknown event "touched"`},
	} {
		_, _, err := LoadBytes("/x/config.toml", []byte(string(DefaultTOML())+"\n"+c.add), nil, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err %v, want %q", c.add, err, c.want)
		}
	}
	_, warns, err := LoadBytes("/x/config.toml", []byte(string(DefaultTOML())+"\n[sop]\ndefault_execution_mode = \"yolo\"\n"), nil, nil)
	if err != nil || len(warns) == 0 || !strings.Contains(strings.Join(warns, "\n"), "using supervised") {
		t.Fatalf("lenient mode: %v %v", err, warns)
	}
}
