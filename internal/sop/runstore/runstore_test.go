package runstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

func backends(t *testing.T) map[string]func() Store {
	return map[string]func() Store{
		"sqlite": func() Store {
			s, err := OpenSQLite(context.Background(), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return s
		},
		"memory": func() Store { return NewMemory() },
	}
}

func rec(id string, rev uint64, js string) Record {
	return Record{RunID: id, SopName: "s", Revision: rev, LastProgressAt: fmt.Sprintf("2026-01-01T00:00:%02dZ", rev), JSON: []byte(js)}
}

func TestRevisionGuard(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open()
			if err := s.Save(ctx, rec("r1", 5, `{"a":1}`)); err != nil {
				t.Fatal(err)
			}
			if err := s.Save(ctx, rec("r1", 4, `{"a":0}`)); !errors.Is(err, ErrStaleRevision) {
				t.Fatalf("lower revision: %v, want ErrStaleRevision", err)
			}
			if err := s.Save(ctx, rec("r1", 5, `{"a":2}`)); !errors.Is(err, ErrRevisionConflict) {
				t.Fatalf("same revision other JSON: %v, want ErrRevisionConflict", err)
			}
			if err := s.Save(ctx, rec("r1", 5, `{"a":1}`)); err != nil {
				t.Fatalf("same revision same JSON must be accepted: %v", err)
			}
			if err := s.Finish(ctx, rec("r1", 6, `{"a":3}`)); err != nil {
				t.Fatal(err)
			}
			if err := s.Save(ctx, rec("r1", 7, `{"a":4}`)); !errors.Is(err, ErrStaleRevision) {
				t.Fatalf("save after finish: %v, want refusal (one terminal state)", err)
			}
			got, err := s.Load(ctx, "r1")
			if err != nil || !got.Terminal || string(got.JSON) != `{"a":3}` || got.Revision != 6 {
				t.Fatalf("load = %+v %v", got, err)
			}
			if _, err := s.Load(ctx, "nope"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("missing run: %v", err)
			}
		})
	}
}

func TestClaimsCapsAndFinish(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open()
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			if _, ok, err := s.Claim(ctx, "a", "s", 1, 2, now); !ok || err != nil {
				t.Fatalf("first claim: %v %v", ok, err)
			}
			if _, ok, _ := s.Claim(ctx, "a", "s", 5, 5, now); ok {
				t.Fatal("a run claimed twice")
			}
			if _, ok, _ := s.Claim(ctx, "b", "s", 1, 2, now); ok {
				t.Fatal("per-SOP cap 1 admitted a second claim")
			}
			if _, ok, _ := s.Claim(ctx, "c", "t", 1, 2, now); !ok {
				t.Fatal("another SOP under the global cap was refused")
			}
			if _, ok, _ := s.Claim(ctx, "d", "u", 1, 2, now); ok {
				t.Fatal("global cap 2 admitted a third claim")
			}
			if _, ok, _ := s.Claim(ctx, "e", "v", 0, 9, now); ok {
				t.Fatal("cap 0 admitted a claim")
			}
			per, total, err := s.ClaimCounts(ctx, "s")
			if err != nil || per != 1 || total != 2 {
				t.Fatalf("counts = %d %d %v", per, total, err)
			}
			if err := s.Finish(ctx, rec("a", 1, `{}`), Event{RunID: "a", TS: "t", Kind: "run_completed"}); err != nil {
				t.Fatal(err)
			}
			if per, _, _ := s.ClaimCounts(ctx, "s"); per != 0 {
				t.Fatal("finish kept the claim")
			}
			if _, ok, _ := s.Claim(ctx, "a", "s", 5, 5, now); ok {
				t.Fatal("a terminal run was claimed")
			}
			gone, err := s.ReapExpired(ctx, now.Add(2*LeaseDuration))
			if err != nil || len(gone) != 1 || gone[0].RunID != "c" || gone[0].Holder == "" {
				t.Fatalf("reap = %+v %v", gone, err)
			}
		})
	}
}

func TestEventsAppendOnlyAndPrune(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := open()
			for i := 1; i <= 5; i++ {
				id := fmt.Sprintf("r%d", i)
				if err := s.Finish(ctx, rec(id, uint64(i), `{}`), Event{RunID: id, TS: "t", Kind: "k", Payload: []byte(`{"n":1}`)}); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Save(ctx, rec("live", 1, `{}`)); err != nil {
				t.Fatal(err)
			}
			if err := s.Append(ctx, Event{RunID: "live", TS: "t", Kind: "a"}, Event{RunID: "live", TS: "t", Kind: "b", Actor: "cli:x"}); err != nil {
				t.Fatal(err)
			}
			evs, _ := s.Events(ctx, "live")
			if len(evs) != 2 || evs[0].Kind != "a" || evs[1].Kind != "b" || evs[0].Seq >= evs[1].Seq || evs[1].Actor != "cli:x" || string(evs[0].Payload) != "{}" {
				t.Fatalf("events = %+v", evs)
			}
			n, err := s.Prune(ctx, 2)
			if err != nil || n != 3 {
				t.Fatalf("prune = %d %v", n, err)
			}
			terms, _ := s.Terminal(ctx, 0)
			if len(terms) != 2 || terms[0].RunID != "r5" || terms[1].RunID != "r4" {
				t.Fatalf("kept %+v, want the two newest", terms)
			}
			if evs, _ := s.Events(ctx, "r1"); len(evs) != 0 {
				t.Fatal("pruned run kept its events")
			}
			if act, _ := s.Active(ctx); len(act) != 1 || act[0].RunID != "live" {
				t.Fatalf("prune touched an active run: %+v", act)
			}
		})
	}
}

// TestUpstreamSchema checks the file holds upstream's tables and columns (so upstream can open it), no
// user_version, and survives a reopen.
func TestUpstreamSchema(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := OpenSQLite(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, rec("r1", 1, `{"version":1}`)); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Claim(ctx, "r1", "s", 1, 1, time.Now()); !ok {
		t.Fatal("claim")
	}
	_ = s.Close()
	db, err := sql.Open("sqlite", filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	want := map[string]string{
		"sop_runs":      "run_id,revision,terminal,last_progress_at,json",
		"sop_events":    "seq,run_id,ts,kind,actor,reason,payload",
		"sop_claims":    "run_id,sop_name,lease_expires,json",
		"sop_proposals": "id,status,json",
	}
	for tbl, cols := range want {
		rows, err := db.Query(`SELECT name FROM pragma_table_info(?)`, tbl)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for rows.Next() {
			var n string
			_ = rows.Scan(&n)
			if got != "" {
				got += ","
			}
			got += n
		}
		rows.Close()
		if got != cols {
			t.Errorf("%s columns = %q, want %q", tbl, got, cols)
		}
	}
	var uv int
	_ = db.QueryRow(`PRAGMA user_version`).Scan(&uv)
	if uv != 0 {
		t.Errorf("user_version = %d, upstream leaves 0", uv)
	}
	var js string
	if err := db.QueryRow(`SELECT json FROM sop_claims WHERE run_id='r1'`).Scan(&js); err != nil || js == "" {
		t.Fatalf("claim json %q %v", js, err)
	}
	s2, err := OpenSQLite(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if act, _ := s2.Active(ctx); len(act) != 1 || act[0].RunID != "r1" {
		t.Fatalf("after reopen: %+v", act)
	}
}
