package store

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/groupcommit"
)

// Concurrent appends, turn starts and turn ends are group-committed: every message is stored exactly once, each
// session's indices are 0..n-1 in row order, and message_count agrees.
func TestConcurrentWritesStoredExactlyOnce(t *testing.T) {
	s, _ := openTestChat(t)
	ctx := t.Context()
	const workers, each, sessions = 16, 30, 4
	type got struct {
		key     string
		idx     int
		content string
	}
	results := make(chan got, workers*each)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				key := fmt.Sprintf("k%d", (w+i)%sessions)
				content := fmt.Sprintf("w%d m%d", w, i)
				var idx int
				var err error
				switch i % 3 {
				case 0:
					idx, err = s.BeginTurn(ctx, key, "a", "", fmt.Sprintf("t%d-%d", w, i), t0, content)
				case 1:
					idx, err = s.EndTurn(ctx, key, "assistant", content, t0, "idle")
				default:
					idx, err = s.Append(ctx, key, "user", content, t0)
				}
				if err != nil {
					t.Errorf("%s: %v", content, err)
					return
				}
				results <- got{key, idx, content}
			}
		}()
	}
	wg.Wait()
	close(results)
	byKey := map[string]map[int]string{}
	for r := range results {
		if byKey[r.key] == nil {
			byKey[r.key] = map[int]string{}
		}
		if prev, dup := byKey[r.key][r.idx]; dup {
			t.Fatalf("%s index %d given to both %q and %q", r.key, r.idx, prev, r.content)
		}
		byKey[r.key][r.idx] = r.content
	}
	total := 0
	for k := range sessions {
		key := fmt.Sprintf("k%d", k)
		msgs, err := s.All(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != len(byKey[key]) {
			t.Fatalf("%s: %d rows stored, %d acknowledged", key, len(msgs), len(byKey[key]))
		}
		for i, m := range msgs {
			if want := byKey[key][i]; m.Content != want {
				t.Fatalf("%s row %d = %q, the append that got index %d stored %q", key, i, m.Content, i, want)
			}
		}
		meta, err := s.Meta(ctx, key)
		if err != nil || meta.MessageCount != len(msgs) {
			t.Fatalf("%s meta = %+v, %v; want message_count %d", key, meta, err, len(msgs))
		}
		total += len(msgs)
	}
	if total != workers*each {
		t.Fatalf("%d messages stored, want %d", total, workers*each)
	}
	assertIntegrity(t, s.d.w)
}

// regroup gives s a new Committer with at most maxOps operations a batch (0: the default), whose Begin hook also
// calls begun.
func regroup(t testing.TB, s *ChatStore, maxOps int, begun func()) {
	t.Helper()
	s.group.Close()
	var err error
	s.group, err = groupcommit.New(context.Background(), s.d.w, maxOps, 0, groupcommit.Hooks{
		Begin: func() { begun(); s.beginBatch() },
		End:   s.endBatch,
	})
	if err != nil {
		t.Fatal(err)
	}
}

// queueBehindHeldBatch makes the next batch of s hold the calls others: it holds the count cache's lock, which the
// leader of a batch takes as the batch begins, starts first (which becomes the leader of a batch of its own and
// waits for the lock) and then the others, and returns once all of them wait in the queue. release lets the
// batches run; wait waits for every call started.
func queueBehindHeldBatch(t *testing.T, s *ChatStore, first func(), others []func()) (release func(), wait func()) {
	t.Helper()
	begun := make(chan struct{}, 1)
	regroup(t, s, 0, func() {
		select {
		case begun <- struct{}{}:
		default:
		}
	})
	s.counts.mu.Lock()
	var wg sync.WaitGroup
	wg.Go(first)
	<-begun
	for _, f := range others {
		wg.Go(f)
	}
	for s.group.Queued() != len(others) {
		runtime.Gosched()
	}
	return s.counts.mu.Unlock, wg.Wait
}

// An operation that fails inside a batch fails alone: its savepoint is rolled back, its caller gets its error,
// the others of the batch are committed, and the indices stay contiguous.
func TestFailingWriteInBatchFailsAlone(t *testing.T) {
	s, _ := openTestChat(t)
	ctx := t.Context()
	// A real constraint of the database refuses one message.
	if _, err := s.d.w.ExecContext(ctx, `CREATE TRIGGER refuse_bad BEFORE INSERT ON sessions
		WHEN new.content = 'bad' BEGIN SELECT RAISE(ABORT, 'refused by test trigger'); END`); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, "k", "user", "m0", t0)
	var mu sync.Mutex
	errs := map[string]error{}
	idxs := map[string]int{}
	call := func(content string, f func() (int, error)) func() {
		return func() {
			idx, err := f()
			mu.Lock()
			errs[content], idxs[content] = err, idx
			mu.Unlock()
		}
	}
	app := func(key, content string) func() {
		return call(content, func() (int, error) { return s.Append(ctx, key, "user", content, t0) })
	}
	release, wait := queueBehindHeldBatch(t, s, app("k", "first"), []func(){
		app("k", "a"),
		call("bad", func() (int, error) { return s.EndTurn(ctx, "k", "assistant", "bad", t0, "idle") }),
		app("k", "b"),
		app("other", "c"),
		call("begin", func() (int, error) { return s.BeginTurn(ctx, "k", "", "", "t1", t0, "d") }),
	})
	release()
	wait()
	if err := errs["bad"]; err == nil || !strings.Contains(err.Error(), "refused by test trigger") {
		t.Fatalf("the refused message's error = %v", err)
	}
	for _, c := range []string{"first", "a", "b", "c", "begin"} {
		if errs[c] != nil {
			t.Fatalf("%q failed beside the refused message: %v", c, errs[c])
		}
	}
	msgs, err := s.All(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	// The queued calls run in the order they were queued, which the test does not choose; each got the index of
	// its row.
	var got []string
	for i, m := range msgs {
		got = append(got, m.Content)
		if m.Index != i {
			t.Fatalf("row %d has index %d", i, m.Index)
		}
		c := m.Content
		if c == "d" {
			c = "begin"
		}
		if c != "m0" && idxs[c] != i {
			t.Fatalf("%q is row %d but its call returned index %d", m.Content, i, idxs[c])
		}
	}
	slices.Sort(got)
	if want := []string{"a", "b", "d", "first", "m0"}; !slices.Equal(got, want) {
		t.Fatalf("messages of k = %q, want %q", got, want)
	}
	if idxs["c"] != 0 {
		t.Fatalf("the other session's message got index %d", idxs["c"])
	}
	// The refused EndTurn left the state alone: the BeginTurn after it set it.
	if m, err := s.Meta(ctx, "k"); err != nil || m.State != "running" || m.TurnID != "t1" || m.MessageCount != 5 {
		t.Fatalf("meta of k = %+v, %v", m, err)
	}
	if idx := mustAppend(t, s, "k", "user", "after", t0); idx != 5 {
		t.Fatalf("the next append got index %d, want 5", idx)
	}
	assertIntegrity(t, s.d.w)
}

// A caller whose context is done before its batch begins gets the context's error and stores nothing.
func TestWriteCancelledWhileQueuedStoresNothing(t *testing.T) {
	s, _ := openTestChat(t)
	ctx := t.Context()
	cctx, cancel := context.WithCancel(ctx)
	var cerr error
	release, wait := queueBehindHeldBatch(t, s, func() { mustAppend(t, s, "k", "user", "first", t0) }, []func(){
		func() { _, cerr = s.Append(cctx, "k", "user", "cancelled", t0) },
		func() { mustAppend(t, s, "k", "user", "kept", t0) },
	})
	cancel()
	release()
	wait()
	if !errors.Is(cerr, context.Canceled) {
		t.Fatalf("cancelled append: err = %v, want context.Canceled", cerr)
	}
	msgs, err := s.All(ctx, "k")
	if err != nil || len(msgs) != 2 || msgs[0].Content != "first" || msgs[1].Content != "kept" {
		t.Fatalf("messages = %+v, %v", msgs, err)
	}
}

// BenchmarkAppendConcurrent measures durable appends from 1, 4 and 16 goroutines (each its own session) with
// group commit (group) and with one transaction per append (single: the path before group commit), on the same
// schema and pragmas. ns/op is per message.
func BenchmarkAppendConcurrent(b *testing.B) {
	const msg = "a typical message of a few words"
	for _, mode := range []string{"single", "group"} {
		for _, g := range []int{1, 4, 16} {
			b.Run(fmt.Sprintf("%s/goroutines=%d", mode, g), func(b *testing.B) {
				s, _ := openTestChat(b)
				if mode == "single" {
					regroup(b, s, 1, func() {})
				}
				ctx := context.Background()
				var next sync.Mutex
				n := 0
				b.ResetTimer()
				var wg sync.WaitGroup
				for w := range g {
					wg.Go(func() {
						key := fmt.Sprintf("rpc_bench-%d", w)
						for {
							next.Lock()
							if n >= b.N {
								next.Unlock()
								return
							}
							n++
							next.Unlock()
							if _, err := s.Append(ctx, key, "user", msg, t0); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msg/s")
			})
		}
	}
}

// A batch's committed messages extend the cached histories of their sessions (All answers without reading), and a
// session one of whose operations failed in the batch is read again: both equal a fresh store's read.
func TestBatchExtendsCachedHistories(t *testing.T) {
	s, p := openTestChat(t)
	ctx := t.Context()
	if _, err := s.d.w.ExecContext(ctx, `CREATE TRIGGER refuse_bad BEFORE INSERT ON sessions
		WHEN new.content = 'bad' BEGIN SELECT RAISE(ABORT, 'refused by test trigger'); END`); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"k", "other", "failing"} {
		mustAppend(t, s, k, "user", k+"-0", t0)
		mustAll(t, s, k) // cached from here on
	}
	app := func(key, content string) func() {
		return func() { _, _ = s.Append(ctx, key, "user", content, t0) }
	}
	release, wait := queueBehindHeldBatch(t, s, app("k", "k-1"), []func(){
		app("other", "other-1"),
		app("k", "k-2"),
		app("failing", "failing-1"),
		func() { _, _ = s.EndTurn(ctx, "failing", "assistant", "bad", t0, "idle") },
		func() { _, _ = s.BeginTurn(ctx, "other", "", "", "t1", t0, "other-2") },
	})
	release()
	wait()
	fresh, err := OpenChat(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]Message{}
	for _, k := range []string{"k", "other", "failing"} {
		want[k] = mustAll(t, fresh, k)
	}
	_ = fresh.Close()
	if len(want["k"]) != 3 || len(want["other"]) != 3 || len(want["failing"]) != 2 {
		t.Fatalf("stored %d/%d/%d messages, want 3/3/2", len(want["k"]), len(want["other"]), len(want["failing"]))
	}
	// The failing session's history was dropped: it is read (and matches) while the readers are open.
	if got := mustAll(t, s, "failing"); !slices.Equal(got, want["failing"]) {
		t.Fatalf("history of the session with a failed operation\n got %+v\nwant %+v", got, want["failing"])
	}
	// The others answer from the cache: without readers.
	if err := s.d.r.Close(); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"k", "other", "failing"} {
		if got := mustAll(t, s, k); !slices.Equal(got, want[k]) {
			t.Fatalf("cached history of %s\n got %+v\nwant %+v", k, got, want[k])
		}
	}
}
