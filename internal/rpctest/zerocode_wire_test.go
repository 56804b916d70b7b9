package rpctest

import (
	"os"
	"path/filepath"
	"testing"
)

// More of zerocode's result types (apps/zerocode/src/wire.rs at upstream's HEAD), hand-kept as in
// zerocode_test.go: required unless zc:"opt", closed Rust enums as zc:"enum=...".

type zcDoctorEntry struct {
	Severity string `json:"severity" zc:"enum=ok|warn|error"`
	Category string `json:"category"`
	Message  string `json:"message"`
}

type zcDoctorSummary struct {
	OK       uint `json:"ok"`
	Warnings uint `json:"warnings"`
	Errors   uint `json:"errors"`
}

type zcDoctorRun struct {
	Results       []zcDoctorEntry `json:"results"`
	Summary       zcDoctorSummary `json:"summary"`
	LogPath       *string         `json:"log_path" zc:"opt"`
	TimedOutPhase *string         `json:"timed_out_phase" zc:"opt"`
}

type zcFsEntry struct {
	Name     string  `json:"name"`
	FullPath string  `json:"full_path"`
	IsDir    bool    `json:"is_dir"`
	IsHidden bool    `json:"is_hidden"`
	Size     uint64  `json:"size"`
	MTime    *uint64 `json:"mtime" zc:"opt"`
}

type zcFsListDir struct {
	Entries []zcFsEntry `json:"entries"`
	CWD     string      `json:"cwd"`
}

// doctor/run (with the refusal hint among its findings) and fs/list_dir parse as zerocode reads them.
func TestZerocodeWireDoctorAndFs(t *testing.T) {
	d := Start(t, WithConfig(zerocodeConfig))
	refusing := &zc{Client: d.Dial(t), t: t}
	refusing.call("initialize", map[string]any{"protocol_version": 1})
	refusing.Conn().Close()

	c := &zc{Client: d.Dial(t), t: t}
	c.call("initialize", map[string]any{"protocol_version": 1})
	var dr zcDoctorRun
	c.decode("doctor/run", map[string]any{"offline": true}, &dr)
	if len(dr.Results) == 0 || dr.Summary.OK == 0 {
		t.Fatalf("doctor/run = %+v", dr)
	}

	dir := filepath.Join(d.ConfigDir, "agents", "default", "workspace", "probe")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hi"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, werr := c.tryCall("fs/list_dir", map[string]any{"path": dir, "show_hidden": false})
	if werr != nil {
		t.Fatalf("fs/list_dir %s: %d %s", dir, werr.Code, werr.Message)
	}
	var ls zcFsListDir
	if err := decodeZC(res, &ls); err != nil {
		t.Fatalf("zerocode cannot parse fs/list_dir: %v\n%s", err, res)
	}
	if len(ls.Entries) != 2 {
		t.Fatalf("fs/list_dir = %+v", ls)
	}
}
