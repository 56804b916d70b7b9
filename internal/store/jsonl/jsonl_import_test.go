package jsonl

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var tImport = time.Date(2025, 6, 7, 8, 9, 10, 0, time.UTC)

// importDir opens a chat store in a fresh sessions directory and returns both.
func importDir(t *testing.T) (*store.ChatStore, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sessions")
	s, err := store.OpenChat(t.Context(), filepath.Join(dir, "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, dir
}

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func exists(t *testing.T, dir, name string) bool {
	t.Helper()
	_, err := os.Lstat(filepath.Join(dir, name))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

// sessionFiles lists the JSONL-related names in dir (sessions.db and its WAL files left out).
func sessionFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "sessions.db") {
			out = append(out, e.Name())
		}
	}
	return out
}

func history(t *testing.T, s *store.ChatStore, key string) []string {
	t.Helper()
	msgs, err := s.All(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range msgs {
		if !m.CreatedAt.Equal(tImport) {
			t.Errorf("%s message %d created_at %v, want the import time %v", key, m.Index, m.CreatedAt, tImport)
		}
		out = append(out, m.Role+": "+m.Content)
	}
	return out
}

type receipt struct {
	key, hash string
	size      int64
	at        string
}

func receipts(t *testing.T, s *store.ChatStore) map[string]receipt {
	t.Helper()
	rows, err := s.Seam().Reader().QueryContext(t.Context(), "SELECT source_name, session_key, source_hash, source_len, imported_at FROM jsonl_import_receipts")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]receipt{}
	for rows.Next() {
		var name string
		var r receipt
		if err := rows.Scan(&name, &r.key, &r.hash, &r.size, &r.at); err != nil {
			t.Fatal(err)
		}
		out[name] = r
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func failedSources(rep ImportReport) []string {
	var out []string
	for _, f := range rep.Failed {
		out = append(out, f.Source)
	}
	return out
}

const (
	aJSONL = `{"role":"user","content":"hi"}
{"role":"assistant","content":"hello there"}
{"role":"user","content":"bye"}
`
	// A tool row in this program's stored form (the JSONL backend writes these); no final newline.
	bJSONL = `{"role":"assistant","content":"be brief"}
{"role":"tool","content":"{\"zeroclaw_tool_result\":{\"tool_call_id\":\"c1\",\"name\":\"time\",\"content\":\"noon\"}}"}`
)

func TestImportJSONLTwoSessions(t *testing.T) {
	s, dir := importDir(t)
	writeFile(t, dir, "a.jsonl", aJSONL)
	writeFile(t, dir, "b.jsonl", bJSONL)

	rep, err := ImportDir(t.Context(), s, dir, tImport)
	if err != nil {
		t.Fatalf("ImportDir: %v", err)
	}
	if rep.Sessions != 2 || rep.Messages != 5 || rep.Resumed != 0 || !rep.Migrated || len(rep.Failed) != 0 || len(rep.Skipped) != 0 {
		t.Fatalf("report = %+v", rep)
	}
	if got, want := history(t, s, "a"), []string{"user: hi", "assistant: hello there", "user: bye"}; !slices.Equal(got, want) {
		t.Errorf("a = %q, want %q", got, want)
	}
	if got, want := history(t, s, "b"), []string{"assistant: be brief", `tool: {"zeroclaw_tool_result":{"tool_call_id":"c1","name":"time","content":"noon"}}`}; !slices.Equal(got, want) {
		t.Errorf("b = %q, want %q", got, want)
	}
	for key, n := range map[string]int{"a": 3, "b": 2} {
		m, err := s.Meta(t.Context(), key)
		if err != nil {
			t.Fatal(err)
		}
		if m.MessageCount != n || !m.CreatedAt.Equal(tImport) || !m.LastActivity.Equal(tImport) || m.State != "idle" {
			t.Errorf("meta %s = %+v", key, m)
		}
	}
	rs := receipts(t, s)
	want := map[string]receipt{
		"a.jsonl": {key: "a", hash: sha(aJSONL), size: int64(len(aJSONL)), at: store.FormatTime(tImport)},
		"b.jsonl": {key: "b", hash: sha(bJSONL), size: int64(len(bJSONL)), at: store.FormatTime(tImport)},
	}
	if len(rs) != 2 || rs["a.jsonl"] != want["a.jsonl"] || rs["b.jsonl"] != want["b.jsonl"] {
		t.Errorf("receipts = %+v, want %+v", rs, want)
	}
	if got := readFile(t, dir, "a.jsonl.migrated"); got != aJSONL {
		t.Errorf("a archive = %q", got)
	}
	if got := readFile(t, dir, "b.jsonl.migrated"); got != bJSONL {
		t.Errorf("b archive = %q", got)
	}
	if got := sessionFiles(t, dir); !slices.Equal(got, []string{"a.jsonl.migrated", "b.jsonl.migrated"}) {
		t.Errorf("files left = %q", got)
	}
	// The writer connection is back to the daemon's usual durability.
	var sync int
	if err := s.Seam().Writer().QueryRowContext(t.Context(), "PRAGMA synchronous").Scan(&sync); err != nil || sync != 1 {
		t.Errorf("synchronous = %d, %v; want 1 (NORMAL)", sync, err)
	}
	// Imported messages are searchable like any other.
	if found, err := s.List(t.Context(), "hello", 0); err != nil || len(found) != 1 || found[0].Key != "a" {
		t.Errorf("List(hello) = %+v, %v", found, err)
	}
}

func TestImportJSONLSkipsInvalidLines(t *testing.T) {
	s, dir := importDir(t)
	content := strings.Join([]string{
		``,
		`   `,
		`{"role":"user","content":"one"}`,
		`not json at all`,
		`{"role":"user","content":"cut`,
		"{\"role\":\"user\",\"content\":\"bad \xff\xfe bytes\"}",
		`{"role":"assistant","content":"two"}` + "\r",
		`{"content":"no role"}`,
		`{"role":"","content":"empty role"}`,
		`{"role":"user","content":null}`,
		`{"role":"user"}`,
		`{"Role":"user","Content":"wrong case"}`,
		`["user","array"]`,
		`{"role":"user","content":"x"} trailing`,
		`  {"role":"assistant","content":"three \u00e9"}  `,
		``,
	}, "\n")
	writeFile(t, dir, "k.jsonl", content)
	rep, err := ImportDir(t.Context(), s, dir, tImport)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sessions != 1 || rep.Messages != 3 {
		t.Errorf("report = %+v", rep)
	}
	if got, want := history(t, s, "k"), []string{"user: one", "assistant: two", "assistant: three é"}; !slices.Equal(got, want) {
		t.Errorf("k = %q, want %q", got, want)
	}
	// The receipt covers the whole file, skipped lines included.
	if r := receipts(t, s)["k.jsonl"]; r.hash != sha(content) || r.size != int64(len(content)) {
		t.Errorf("receipt = %+v", r)
	}
	if got := readFile(t, dir, "k.jsonl.migrated"); got != content {
		t.Errorf("archive differs from the source")
	}
}

func TestImportJSONLEmptyFileIsZeroMessageSession(t *testing.T) {
	s, dir := importDir(t)
	writeFile(t, dir, "empty.jsonl", "")
	writeFile(t, dir, "blank.jsonl", "\n  \n\t\r\n")
	rep, err := ImportDir(t.Context(), s, dir, tImport)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sessions != 2 || rep.Messages != 0 {
		t.Errorf("report = %+v", rep)
	}
	for _, key := range []string{"empty", "blank"} {
		m, err := s.Meta(t.Context(), key)
		if err != nil || m.MessageCount != 0 {
			t.Errorf("meta %s = %+v, %v", key, m, err)
		}
		if !exists(t, dir, key+".jsonl.migrated") || exists(t, dir, key+".jsonl") {
			t.Errorf("%s not archived: %q", key, sessionFiles(t, dir))
		}
	}
	if r := receipts(t, s)["empty.jsonl"]; r.hash != sha("") || r.size != 0 {
		t.Errorf("receipt of the empty file = %+v", r)
	}
}

func TestImportJSONLNoValidMessagesRestoresLive(t *testing.T) {
	s, dir := importDir(t)
	garbage := "not json\n{\"role\":1}\n"
	binary := "\xff\xfe\xfd\n"
	writeFile(t, dir, "garbage.jsonl", garbage)
	writeFile(t, dir, "binary.jsonl", binary)
	writeFile(t, dir, "good.jsonl", aJSONL)

	rep, err := ImportDir(t.Context(), s, dir, tImport)
	if !errors.Is(err, ErrNoValidMessages) || !strings.Contains(err.Error(), "contains no valid messages") {
		t.Fatalf("err = %v, want ErrNoValidMessages", err)
	}
	if got := failedSources(rep); !slices.Equal(got, []string{"binary.jsonl", "garbage.jsonl"}) {
		t.Errorf("failed = %q", got)
	}
	if rep.Sessions != 1 || rep.Messages != 3 {
		t.Errorf("report = %+v (the good source still imports)", rep)
	}
	if readFile(t, dir, "garbage.jsonl") != garbage || readFile(t, dir, "binary.jsonl") != binary {
		t.Error("a failed source was not restored byte for byte")
	}
	for _, name := range []string{"garbage.jsonl.importing", "garbage.jsonl.migrated", "binary.jsonl.importing"} {
		if exists(t, dir, name) {
			t.Errorf("%s exists", name)
		}
	}
	for _, key := range []string{"garbage", "binary"} {
		if _, err := s.Meta(t.Context(), key); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("meta %s: %v, want store.ErrNotFound", key, err)
		}
		if _, ok := receipts(t, s)[key+".jsonl"]; ok {
			t.Errorf("receipt for %s", key)
		}
	}
}

func TestImportJSONLNeverMergesIntoExistingSession(t *testing.T) {
	s, dir := importDir(t)
	mustAppend(t, s, "a", "user", "already here", t0)
	writeFile(t, dir, "a.jsonl", aJSONL)

	rep, err := ImportDir(t.Context(), s, dir, tImport)
	if !errors.Is(err, ErrImportConflict) || !slices.Equal(failedSources(rep), []string{"a.jsonl"}) {
		t.Fatalf("err = %v, report %+v; want ErrImportConflict for a.jsonl", err, rep)
	}
	if rep.Migrated {
		t.Error("Migrated without any receipt")
	}
	if got := sessionFiles(t, dir); !slices.Equal(got, []string{"a.jsonl"}) || readFile(t, dir, "a.jsonl") != aJSONL {
		t.Errorf("source not restored to live: %q", got)
	}
	msgs, err := s.All(t.Context(), "a")
	if err != nil || len(msgs) != 1 || msgs[0].Content != "already here" {
		t.Errorf("existing session changed: %+v, %v", msgs, err)
	}
	if len(receipts(t, s)) != 0 {
		t.Error("a receipt was written")
	}

	// Metadata alone (a session with no messages yet) also counts as existing state.
	if _, _, err := s.EnsureSession(t.Context(), "b", "default", "", t0); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "b.jsonl", bJSONL)
	if _, err := ImportDir(t.Context(), s, dir, tImport); !errors.Is(err, ErrImportConflict) || !exists(t, dir, "b.jsonl") {
		t.Errorf("metadata-only session: err = %v, files %q", err, sessionFiles(t, dir))
	}
}

func TestImportJSONLRerunIsNoOp(t *testing.T) {
	s, dir := importDir(t)
	writeFile(t, dir, "a.jsonl", aJSONL)
	if _, err := ImportDir(t.Context(), s, dir, tImport); err != nil {
		t.Fatal(err)
	}
	rep, err := ImportDir(t.Context(), s, dir, tImport.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sessions != 0 || rep.Messages != 0 || rep.Resumed != 0 || !rep.Migrated {
		t.Errorf("second run report = %+v", rep)
	}
	if got := history(t, s, "a"); len(got) != 3 {
		t.Errorf("a has %d messages after a re-run", len(got))
	}
	// A fresh store on the same database sees the same (nothing to do, but migrated).
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := store.OpenChat(t.Context(), filepath.Join(dir, "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if rep, err := ImportDir(t.Context(), s2, dir, tImport); err != nil || rep.Sessions != 0 || !rep.Migrated {
		t.Errorf("after reopen: %+v, %v", rep, err)
	}
	if _, err := ImportDir(t.Context(), s, dir, tImport); !errors.Is(err, store.ErrClosed) {
		t.Errorf("import on a closed store: %v, want store.ErrClosed", err)
	}
}

func TestImportJSONLResumesCommittedStagedSource(t *testing.T) {
	s, dir := importDir(t)
	writeFile(t, dir, "a.jsonl", aJSONL)
	writeFile(t, dir, "b.jsonl", bJSONL)
	if _, err := ImportDir(t.Context(), s, dir, tImport); err != nil {
		t.Fatal(err)
	}
	// Crash after the commit, before the archive: the staged file is all that is left.
	if err := os.Rename(filepath.Join(dir, "a.jsonl.migrated"), filepath.Join(dir, "a.jsonl.importing")); err != nil {
		t.Fatal(err)
	}
	// Crash after the hard link, before removing the staged file: both are there.
	if err := os.Link(filepath.Join(dir, "b.jsonl.migrated"), filepath.Join(dir, "b.jsonl.importing")); err != nil {
		t.Fatal(err)
	}
	// Crash after staging, before the commit: no receipt yet.
	writeFile(t, dir, "c.jsonl.importing", `{"role":"user","content":"c"}`)

	rep, err := ImportDir(t.Context(), s, dir, tImport)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Resumed != 2 || rep.Sessions != 1 || rep.Messages != 1 {
		t.Errorf("report = %+v, want 2 resumed and c imported", rep)
	}
	if got := history(t, s, "a"); len(got) != 3 {
		t.Errorf("a has %d messages, want 3 (no duplicates)", len(got))
	}
	if got := history(t, s, "b"); len(got) != 2 {
		t.Errorf("b has %d messages, want 2", len(got))
	}
	if got := history(t, s, "c"); !slices.Equal(got, []string{"user: c"}) {
		t.Errorf("c = %q", got)
	}
	want := []string{"a.jsonl.migrated", "b.jsonl.migrated", "c.jsonl.migrated"}
	if got := sessionFiles(t, dir); !slices.Equal(got, want) {
		t.Errorf("files = %q, want %q", got, want)
	}
	if readFile(t, dir, "a.jsonl.migrated") != aJSONL {
		t.Error("a archive differs")
	}
}

func TestImportJSONLMismatchKeepsStagedSource(t *testing.T) {
	s, dir := importDir(t)
	writeFile(t, dir, "a.jsonl", aJSONL)
	writeFile(t, dir, "b.jsonl", bJSONL)
	if _, err := ImportDir(t.Context(), s, dir, tImport); err != nil {
		t.Fatal(err)
	}
	// a: a staged source whose bytes differ from its receipt.
	if err := os.Remove(filepath.Join(dir, "a.jsonl.migrated")); err != nil {
		t.Fatal(err)
	}
	changed := aJSONL + `{"role":"user","content":"later"}` + "\n"
	writeFile(t, dir, "a.jsonl.importing", changed)
	// b: a matching staged source, but an archive that does not match the receipt.
	writeFile(t, dir, "b.jsonl.importing", bJSONL)
	writeFile(t, dir, "b.jsonl.migrated", "tampered")

	rep, err := ImportDir(t.Context(), s, dir, tImport)
	if !errors.Is(err, ErrReceiptMismatch) || !slices.Equal(failedSources(rep), []string{"a.jsonl", "b.jsonl"}) {
		t.Fatalf("err = %v, failed %q; want ErrReceiptMismatch for a and b", err, failedSources(rep))
	}
	if rep.Sessions != 0 || rep.Messages != 0 || !rep.Migrated {
		t.Errorf("report = %+v", rep)
	}
	if readFile(t, dir, "a.jsonl.importing") != changed || exists(t, dir, "a.jsonl") || exists(t, dir, "a.jsonl.migrated") {
		t.Errorf("a staged source not left in place: %q", sessionFiles(t, dir))
	}
	if readFile(t, dir, "b.jsonl.importing") != bJSONL || readFile(t, dir, "b.jsonl.migrated") != "tampered" {
		t.Errorf("b files changed: %q", sessionFiles(t, dir))
	}
	if got := history(t, s, "a"); len(got) != 3 {
		t.Errorf("a has %d messages, want 3", len(got))
	}
	if r := receipts(t, s)["a.jsonl"]; r.hash != sha(aJSONL) {
		t.Errorf("receipt changed: %+v", r)
	}
}

func TestImportJSONLConflictsDoNotStopOtherSources(t *testing.T) {
	s, dir := importDir(t)
	writeFile(t, dir, "both.jsonl", aJSONL)
	writeFile(t, dir, "both.jsonl.importing", bJSONL)
	writeFile(t, dir, "clobber.jsonl", aJSONL)
	writeFile(t, dir, "clobber.jsonl.migrated", "an earlier archive")
	writeFile(t, dir, "fine.jsonl", bJSONL)
	writeFile(t, dir, "notes.txt", "ignored")
	writeFile(t, dir, "\xffbad.jsonl", aJSONL)

	rep, err := ImportDir(t.Context(), s, dir, tImport)
	if !errors.Is(err, ErrImportConflict) || !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("err = %v, want ErrImportConflict and store.ErrInvalid joined", err)
	}
	if got := failedSources(rep); !slices.Equal(got, []string{`"\xffbad.jsonl"`, "both.jsonl", "clobber.jsonl"}) {
		t.Errorf("failed = %q", got)
	}
	if rep.Sessions != 1 || rep.Messages != 2 {
		t.Errorf("report = %+v, want fine imported", rep)
	}
	if got := history(t, s, "fine"); len(got) != 2 {
		t.Errorf("fine = %q", got)
	}
	for name, want := range map[string]string{
		"both.jsonl": aJSONL, "both.jsonl.importing": bJSONL,
		"clobber.jsonl": aJSONL, "clobber.jsonl.migrated": "an earlier archive", "notes.txt": "ignored",
	} {
		if got := readFile(t, dir, name); got != want {
			t.Errorf("%s = %q, want it untouched", name, got)
		}
	}
	for _, key := range []string{"both", "clobber"} {
		if _, err := s.Meta(t.Context(), key); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s imported: %v", key, err)
		}
	}
}

func TestImportJSONLKeyIsTheFileStem(t *testing.T) {
	s, dir := importDir(t)
	// A key whose original spelling had '@', ':' and '.' (mapped to '_' when the file was written).
	writeFile(t, dir, "matrix__room_server_org-1.jsonl", aJSONL)
	if _, err := ImportDir(t.Context(), s, dir, tImport); err != nil {
		t.Fatal(err)
	}
	if got := history(t, s, "matrix__room_server_org-1"); len(got) != 3 {
		t.Errorf("history under the stem = %q", got)
	}
	if r := receipts(t, s)["matrix__room_server_org-1.jsonl"]; r.key != "matrix__room_server_org-1" {
		t.Errorf("receipt = %+v", r)
	}
}

func TestImportJSONLStagedFirstThenByName(t *testing.T) {
	s, dir := importDir(t)
	writeFile(t, dir, "a.jsonl", `{"role":"user","content":"a"}`)
	writeFile(t, dir, "c.jsonl", `{"role":"user","content":"c"}`)
	writeFile(t, dir, "z.jsonl.importing", `{"role":"user","content":"z"}`)
	writeFile(t, dir, "b.jsonl", `{"role":"user","content":"b"}`)
	if _, err := ImportDir(t.Context(), s, dir, tImport); err != nil {
		t.Fatal(err)
	}
	rows, err := s.Seam().Reader().QueryContext(t.Context(), "SELECT session_key FROM sessions ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var order []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		order = append(order, k)
	}
	if !slices.Equal(order, []string{"z", "a", "b", "c"}) {
		t.Errorf("import order = %q", order)
	}
}

func TestImportJSONLMissingDirectory(t *testing.T) {
	s, dir := importDir(t)
	rep, err := ImportDir(t.Context(), s, filepath.Join(dir, "nope"), tImport)
	if err != nil || rep.Sessions != 0 || rep.Migrated || rep.Failed != nil {
		t.Errorf("missing dir: %+v, %v", rep, err)
	}
}

// Two stores on one directory (a reload racing the first construction): the process-wide lock makes one
// import and the other find nothing left, so every message lands once.
func TestImportJSONLConcurrentStoresImportOnce(t *testing.T) {
	s1, dir := importDir(t)
	s2, err := store.OpenChat(t.Context(), filepath.Join(dir, "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	for _, k := range []string{"a", "b", "c", "d"} {
		writeFile(t, dir, k+".jsonl", aJSONL)
	}
	var wg sync.WaitGroup
	reps := make([]ImportReport, 2)
	errs := make([]error, 2)
	for i, s := range []*store.ChatStore{s1, s2} {
		wg.Go(func() { reps[i], errs[i] = ImportDir(t.Context(), s, dir, tImport) })
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("errors: %v / %v", errs[0], errs[1])
	}
	if n := reps[0].Sessions + reps[1].Sessions; n != 4 {
		t.Errorf("sessions imported in total = %d, want 4", n)
	}
	for _, k := range []string{"a", "b", "c", "d"} {
		if got := history(t, s1, k); len(got) != 3 {
			t.Errorf("%s has %d messages, want 3", k, len(got))
		}
	}
}

// hasContent decides between "zero-message session" and "contains no valid messages".
func TestParseJSONLHasContent(t *testing.T) {
	for _, tc := range []struct {
		in         string
		n          int
		hasContent bool
	}{
		{"", 0, false},
		{" \n\t\n\r\n", 0, false},
		{"\xff", 0, true},
		{"x", 0, true},
		{`{"role":"user","content":""}`, 1, true},
		{`{"role":"user","content":"a","extra":1}` + "\n" + `{"role":"user","content":"b"}`, 2, true},
	} {
		msgs, has := parseJSONL([]byte(tc.in))
		if len(msgs) != tc.n || has != tc.hasContent {
			t.Errorf("parseJSONL(%q) = %d msgs, content %v; want %d, %v", tc.in, len(msgs), has, tc.n, tc.hasContent)
		}
	}
}
