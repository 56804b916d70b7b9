package doctor_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/doctor"
	"github.com/zeroclaw-go/zeroclaw/internal/install"
	"github.com/zeroclaw-go/zeroclaw/internal/secrets"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
	"github.com/zeroclaw-go/zeroclaw/internal/store/jsonl"
)

// newInstall builds a real install: the default config, a sessions.db holding enough messages to span many
// pages, and an encrypted provider key with its .secret_key.
func newInstall(t *testing.T) install.Layout {
	t.Helper()
	root := filepath.Join(t.TempDir(), "zc")
	l := install.Layout{Root: root, DataDir: filepath.Join(root, "data")}
	if err := l.Ensure(); err != nil {
		t.Fatal(err)
	}
	if _, err := config.EnsureDefault(l.ConfigPath()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	chat, err := store.OpenChat(ctx, filepath.Join(l.SessionsDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("a message long enough to fill pages quickly. ", 150)
	for i := range 40 {
		if _, err := chat.Append(ctx, "s1", "user", body+string(rune('a'+i%26)), time.Unix(1700000000, 0)); err != nil {
			t.Fatal(err)
		}
	}
	if err := chat.Close(); err != nil {
		t.Fatal(err)
	}
	return l
}

// withEncryptedKey stores an encrypted api_key for an ollama provider pointing at url.
func withEncryptedKey(t *testing.T, l install.Layout, url string) {
	t.Helper()
	enc, err := secrets.New(l.SecretKeyPath()).Encrypt("sk-doctor-test-secret")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(l.ConfigPath())
	if err != nil {
		t.Fatal(err)
	}
	raw = append(raw, []byte("\n[providers.models.ollama.local]\nmodel = \"m\"\nuri = \""+url+"\"\napi_key = \""+enc+"\"\n")...)
	if err := os.WriteFile(l.ConfigPath(), raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, l install.Layout) api.DoctorResult {
	t.Helper()
	return doctor.Run(context.Background(), doctor.Options{Layout: l, Endpoint: l.SocketPath(), ProbeTimeout: 2 * time.Second})
}

// find returns the finding with id, failing the test when there is none.
func find(t *testing.T, res api.DoctorResult, id string) api.DiagResult {
	t.Helper()
	for _, d := range res.Results {
		if d.ID == id {
			return d
		}
	}
	t.Fatalf("no finding %q in %+v", id, res.Results)
	return api.DiagResult{}
}

func assertClean(t *testing.T, res api.DoctorResult) {
	t.Helper()
	if !doctor.OK(res) {
		t.Fatalf("a sound install has problems: %+v", res.Results)
	}
	if res.Summary.OK == 0 || res.Summary.OK != len(res.Results) {
		t.Fatalf("summary %+v does not count %d results", res.Summary, len(res.Results))
	}
}

func TestCleanInstall(t *testing.T) {
	t.Parallel()
	l := newInstall(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" || strings.Contains(r.URL.String(), "sk-") {
			t.Errorf("the probe sent a credential: %v", r.Header)
		}
		http.NotFound(w, r) // any answer proves the endpoint reachable
	}))
	defer srv.Close()
	withEncryptedKey(t, l, srv.URL)
	res := run(t, l)
	assertClean(t, res)
	find(t, res, "db-ok")
	if d := find(t, res, "db-size"); !strings.Contains(d.Message, ", WAL ") || !strings.Contains(d.Message, " free pages (") {
		t.Fatalf("database space finding: %+v", d)
	}
	find(t, res, "secrets-ok")
	if d := find(t, res, "provider-reachable"); !strings.Contains(d.Message, "HTTP 404") {
		t.Fatalf("provider finding: %+v", d)
	}
}

func TestWrongMode(t *testing.T) {
	t.Parallel()
	l := newInstall(t)
	withEncryptedKey(t, l, "http://127.0.0.1:1")
	if err := os.Chmod(l.SecretKeyPath(), 0o644); err != nil {
		t.Fatal(err)
	}
	res := doctor.Run(context.Background(), doctor.Options{Layout: l, Endpoint: l.SocketPath(), SkipProviders: true})
	d := find(t, res, "file-mode")
	if d.Severity != api.SeverityError || d.Path != l.SecretKeyPath() || d.Fix != "chmod 600 "+l.SecretKeyPath() || !strings.Contains(d.Message, "0644") {
		t.Fatalf("finding: %+v", d)
	}
	if doctor.OK(res) {
		t.Fatal("OK despite an error")
	}
	// Applying the fix clears it.
	if err := os.Chmod(l.SecretKeyPath(), 0o600); err != nil {
		t.Fatal(err)
	}
	assertClean(t, doctor.Run(context.Background(), doctor.Options{Layout: l, Endpoint: l.SocketPath(), SkipProviders: true}))
}

func TestCorruptPage(t *testing.T) {
	t.Parallel()
	l := newInstall(t)
	db := filepath.Join(l.SessionsDir(), "sessions.db")
	fi, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() < 20*4096 {
		t.Fatalf("sessions.db is only %d bytes: too small to corrupt a middle page", fi.Size())
	}
	f, err := os.OpenFile(db, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Three pages around the middle, so a b-tree page is hit whatever the schema's pages before them (an
	// overflow page alone can pass the check).
	garbage := []byte(strings.Repeat("\x0d\xff\x00\x42", 3*1024))
	if _, err := f.WriteAt(garbage, (fi.Size()/4096/2-1)*4096); err != nil {
		t.Fatal(err)
	}
	f.Close()
	res := run(t, l)
	var d api.DiagResult
	for _, x := range res.Results {
		if x.Path == db && x.Category == doctor.CategoryDatabase {
			d = x
		}
	}
	if d.Severity != api.SeverityError || d.ID != "db-corrupt" || !strings.Contains(d.Fix, "zeroclaw restore") {
		t.Fatalf("finding for the corrupt database: %+v (all: %+v)", d, res.Results)
	}
	t.Logf("%s: %s", d.ID, d.Message)
}

func TestOrphanImporting(t *testing.T) {
	t.Parallel()
	l := newInstall(t)
	p := filepath.Join(l.SessionsDir(), "u1.jsonl.importing")
	if err := os.WriteFile(p, []byte(`{"role":"user","content":"hi"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res := run(t, l)
	d := find(t, res, "importing-orphan")
	if d.Severity != api.SeverityWarn || d.Path != p || !strings.Contains(d.Fix, "zeroclaw daemon") {
		t.Fatalf("finding: %+v", d)
	}
	// With the live file too, the import cannot tell which is current: an error.
	if err := os.WriteFile(filepath.Join(l.SessionsDir(), "u1.jsonl"), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if d := find(t, run(t, l), "importing-ambiguous"); d.Severity != api.SeverityError {
		t.Fatalf("finding: %+v", d)
	}
}

func TestMissingKey(t *testing.T) {
	t.Parallel()
	l := newInstall(t)
	withEncryptedKey(t, l, "http://127.0.0.1:1")
	if err := os.Remove(l.SecretKeyPath()); err != nil {
		t.Fatal(err)
	}
	res := doctor.Run(context.Background(), doctor.Options{Layout: l, Endpoint: l.SocketPath(), SkipProviders: true})
	d := find(t, res, "key-missing")
	if d.Severity != api.SeverityError || !strings.Contains(d.Message, "providers.models.ollama.local.api_key") || !strings.Contains(d.Fix, "restore") {
		t.Fatalf("finding: %+v", d)
	}
	for _, x := range res.Results {
		if strings.Contains(x.Message+x.Fix, "sk-doctor-test-secret") {
			t.Fatalf("a finding shows the secret: %+v", x)
		}
	}
	if _, err := os.Stat(l.SecretKeyPath()); err == nil {
		t.Fatal("the doctor created a key")
	}
	// A different key: the values do not open.
	if _, err := secrets.New(l.SecretKeyPath()).Encrypt("x"); err != nil {
		t.Fatal(err)
	}
	if d := find(t, doctor.Run(context.Background(), doctor.Options{Layout: l, Endpoint: l.SocketPath(), SkipProviders: true}), "key-wrong"); d.Severity != api.SeverityError {
		t.Fatalf("finding: %+v", d)
	}
}

func TestUnreachableProvider(t *testing.T) {
	t.Parallel()
	l := newInstall(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	withEncryptedKey(t, l, "http://"+addr)
	d := find(t, run(t, l), "provider-unreachable")
	if d.Severity != api.SeverityWarn || d.Path != "providers.models.ollama.local" {
		t.Fatalf("finding: %+v", d)
	}
}

func TestNeverCreates(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "empty")
	l := install.Layout{Root: root, DataDir: filepath.Join(root, "data")}
	res := run(t, l)
	find(t, res, "config-missing")
	if _, err := os.Stat(root); err == nil {
		t.Fatal("the doctor created the install")
	}
}

// A legacy JSONL session imported into sessions.db: its archive matches the receipt; an edited archive is an
// error (the daemon refuses it), a removed one a warning (nothing is lost).
func TestReceiptsAgainstArchives(t *testing.T) {
	t.Parallel()
	l := newInstall(t)
	src := filepath.Join(l.SessionsDir(), "u1.jsonl")
	if err := os.WriteFile(src, []byte(`{"role":"user","content":"hi"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	chat, err := store.OpenChat(context.Background(), filepath.Join(l.SessionsDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jsonl.ImportDir(context.Background(), chat, l.SessionsDir(), time.Unix(1700000000, 0)); err != nil {
		t.Fatal(err)
	}
	chat.Close()
	find(t, run(t, l), "receipts-ok")
	archive := src + ".migrated"
	if err := os.WriteFile(archive, []byte(`{"role":"user","content":"edited"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if d := find(t, run(t, l), "archive-mismatch"); d.Severity != api.SeverityError || d.Path != archive {
		t.Fatalf("finding: %+v", d)
	}
	if err := os.Remove(archive); err != nil {
		t.Fatal(err)
	}
	if d := find(t, run(t, l), "archive-missing"); d.Severity != api.SeverityWarn || !strings.Contains(d.Fix, "nothing is lost") {
		t.Fatalf("finding: %+v", d)
	}
}

// An empty .db is a valid database nothing was written to (SQLite creates the file at open); a .db that lost
// its header is not.
func TestEmptyAndForeignDB(t *testing.T) {
	t.Parallel()
	l := newInstall(t)
	empty := filepath.Join(l.DataDir, "devices.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	assertClean(t, doctor.Run(context.Background(), doctor.Options{Layout: l, Endpoint: l.SocketPath(), SkipProviders: true}))
	if err := os.WriteFile(empty, []byte("not a database at all, but long enough"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := find(t, doctor.Run(context.Background(), doctor.Options{Layout: l, Endpoint: l.SocketPath(), SkipProviders: true}), "db-not-sqlite")
	if d.Severity != api.SeverityError || d.Path != empty {
		t.Fatalf("finding: %+v", d)
	}
}
