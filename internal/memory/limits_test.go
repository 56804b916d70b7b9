package memory

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// fillerTerms is n distinct words that match no stored memory.
func fillerTerms(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("nomatch%d", i)
	}
	return out
}

// A recall searches the first MaxQueryTerms distinct terms of the first MaxQueryBytes of its text: a term past
// them finds nothing, one inside them is found however long the rest is, repeats do not use up the cap, and
// a NUL byte or a 100 KB text is searched, not an error.
func TestRecallQueryCaps(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			b := open(t)
			a, err := b.EnsureAgent(ctx, "alpha")
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Store(ctx, a, Record{Key: "pet", Content: "Ada has a zebra", Category: CategoryCore, Now: fixedNow}); err != nil {
				t.Fatal(err)
			}
			recall := func(text string) []Entry {
				t.Helper()
				got, err := b.Recall(ctx, Query{Text: text, Limit: 5, Agents: []string{a}})
				if err != nil {
					t.Fatalf("recall of %d bytes: %v", len(text), err)
				}
				return got
			}
			if got := recall(strings.Join(append(fillerTerms(MaxQueryTerms), "zebra"), " ")); len(got) != 0 {
				t.Errorf("term %d was searched: %+v", MaxQueryTerms+1, got)
			}
			if got := recall(strings.Join(append(fillerTerms(MaxQueryTerms-1), "zebra"), " ")); len(got) != 1 {
				t.Errorf("term %d was not searched: %+v", MaxQueryTerms, got)
			}
			if got := recall(strings.Repeat("nomatch ", 2*MaxQueryTerms) + "zebra"); len(got) != 1 {
				t.Errorf("repeated terms used up the cap: %+v", got)
			}
			if got := recall("zebra " + strings.Join(fillerTerms(5000), " ")); len(got) != 1 {
				t.Errorf("5,000 terms after the match: %+v", got)
			}
			long := strings.Repeat("x", MaxQueryBytes) + " zebra"
			if got := recall(long); len(got) != 0 {
				t.Errorf("a term past byte %d was searched: %+v", MaxQueryBytes, got)
			}
			if got := recall("zebra\x00" + strings.Repeat("y", 100<<10)); len(got) != 1 {
				t.Errorf("NUL and 100 KB: %+v", got)
			}
		})
	}
}

// Store refuses a key past MaxKeyBytes or with a NUL, and content past MaxContentBytes; an auto-saved message
// past it is cut, not lost.
func TestStoreSizeCaps(t *testing.T) {
	m := openManager(t, t.TempDir(), testConfig(nil))
	h, err := m.For(t.Context(), "default")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, key, content, msg string }{
		{"long key", strings.Repeat("k", MaxKeyBytes+1), "v", "key is 257 bytes, at most 256"},
		{"NUL key", "a\x00b", "v", "key must not contain a NUL byte"},
		{"long content", "k", strings.Repeat("v", MaxContentBytes+1), fmt.Sprintf("content is %d bytes, at most %d", MaxContentBytes+1, MaxContentBytes)},
	} {
		err := h.Store(t.Context(), tc.key, tc.content, "", "")
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: err = %v, want ErrInvalid saying %q", tc.name, err, tc.msg)
		}
	}
	if err := h.Store(t.Context(), strings.Repeat("k", MaxKeyBytes), strings.Repeat("v", MaxContentBytes), "", ""); err != nil {
		t.Fatalf("at the caps: %v", err)
	}
	if err := m.AutoSave(t.Context(), h, "t1", "rpc_s1", strings.Repeat("é", MaxContentBytes)); err != nil {
		t.Fatalf("auto-save of a long message: %v", err)
	}
	e, err := h.Get(t.Context(), AutoSaveKey("t1"))
	if err != nil || e == nil {
		t.Fatalf("auto-saved message: %v %v", e, err)
	}
	if e.Content != strings.Repeat("é", MaxContentBytes/2) {
		t.Fatalf("auto-saved message of %d bytes, want the first %d", len(e.Content), MaxContentBytes)
	}
}
