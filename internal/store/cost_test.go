package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"
)

func TestCostLedger(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "state")
	p := filepath.Join(dir, "costs.jsonl")
	l := OpenCostLedger(p)
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("ledger file exists before the first record: %v", err)
	}

	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			r := CostRecord{
				ID: fmt.Sprintf("req-%02d", i),
				Usage: CostUsage{Model: "gpt-4.1", InputTokens: 10 + i, OutputTokens: 5, TotalTokens: 15 + i,
					CostUSD: 0.0125, Timestamp: "2025-03-01T12:00:00Z"},
				SessionID: "s1",
			}
			if i%2 == 0 {
				r.AgentAlias = "coder"
			}
			errs <- l.Record(t.Context(), r)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Record(t.Context(), CostRecord{ID: "late"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Record after Close err = %v, want ErrClosed", err)
	}

	for path, want := range map[string]os.FileMode{p: 0o600, dir: 0o700} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Fatalf("%s mode %v, want %v", path, fi.Mode().Perm(), want)
		}
	}

	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ids []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &obj); err != nil {
			t.Fatalf("line %q is not JSON: %v", sc.Text(), err)
		}
		var id string
		if err := json.Unmarshal(obj["id"], &id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		wantKeys := []string{"id", "session_id", "usage"}
		var idx int
		fmt.Sscanf(id, "req-%d", &idx)
		if idx%2 == 0 {
			wantKeys = append(wantKeys, "agent_alias")
		}
		if got := sortedKeys(obj); !slices.Equal(got, sorted(wantKeys)) {
			t.Fatalf("line keys %v, want %v", got, sorted(wantKeys))
		}
		var usage map[string]json.RawMessage
		if err := json.Unmarshal(obj["usage"], &usage); err != nil {
			t.Fatal(err)
		}
		wantUsage := []string{"cost_usd", "input_tokens", "model", "output_tokens", "timestamp", "total_tokens"}
		if got := sortedKeys(usage); !slices.Equal(got, wantUsage) {
			t.Fatalf("usage keys %v, want %v", got, wantUsage)
		}
		var back CostRecord
		if err := json.Unmarshal(sc.Bytes(), &back); err != nil || back.Usage.CostUSD != 0.0125 || back.Usage.Model != "gpt-4.1" {
			t.Fatalf("round trip: %+v, %v", back, err)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(ids)
	if len(ids) != n || ids[0] != "req-00" || ids[n-1] != fmt.Sprintf("req-%02d", n-1) || len(slices.Compact(ids)) != n {
		t.Fatalf("ids = %v", ids)
	}

	// A new ledger on the same file appends; it does not truncate.
	l2 := OpenCostLedger(p)
	if err := l2.Record(t.Context(), CostRecord{ID: "req-more", SessionID: "s2"}); err != nil {
		t.Fatal(err)
	}
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if lines := slices.DeleteFunc(splitLines(data), func(s string) bool { return s == "" }); len(lines) != n+1 {
		t.Fatalf("after reopen: %d lines, want %d", len(lines), n+1)
	}
}

func TestCostLedgerCancelledContext(t *testing.T) {
	p := filepath.Join(t.TempDir(), "costs.jsonl")
	l := OpenCostLedger(p)
	defer l.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := l.Record(ctx, CostRecord{ID: "x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a cancelled Record must not create the file")
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sorted(s []string) []string { s = slices.Clone(s); sort.Strings(s); return s }

func splitLines(b []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}
