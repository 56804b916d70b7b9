package provider

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// timeout_secs bounds silence, not the whole answer: a stream slower in total than the timeout but never
// silent that long completes; a backend that goes quiet mid-stream, or never answers, fails with ErrIdleTimeout
// naming the alias, and its request is aborted.
func TestIdleTimeout(t *testing.T) {
	t.Parallel()
	body := readFixture(t, "openai_text.sse")
	frames := splitFrames(body)
	slow := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, f := range frames {
			w.Write(f)
			w.(http.Flusher).Flush()
			time.Sleep(40 * time.Millisecond)
		}
	}
	srv := newFakeBackend(t, slow)
	p, err := New(Settings{Family: FamilyOpenAI, URI: srv.URL, Model: "m", IdleTimeout: 250 * time.Millisecond, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(frames)*40 < 250 {
		t.Fatalf("fixture too short (%d frames) to outlast the timeout in total", len(frames))
	}
	if _, err := p.Stream(t.Context(), Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}}, nil); err != nil {
		t.Fatalf("a slow but steady stream failed: %v", err)
	}

	gone := make(chan struct{})
	stall := newFakeBackend(t, blockAfter("text/event-stream", frames[0], gone))
	p, _ = New(Settings{Family: FamilyOpenAI, Alias: "quiet", URI: stall.URL, Model: "m", IdleTimeout: 100 * time.Millisecond, MaxRetries: -1})
	_, err = p.Stream(t.Context(), Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}}, nil)
	if !errors.Is(err, ErrIdleTimeout) || !strings.Contains(err.Error(), "openai.quiet") {
		t.Fatalf("stalled stream: %v", err)
	}
	waitClosed(t, gone, "stalled request")

	silent := make(chan struct{})
	mute := newFakeBackend(t, func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		close(silent)
	})
	p, _ = New(Settings{Family: FamilyOpenAI, URI: mute.URL, Model: "m", IdleTimeout: 100 * time.Millisecond, MaxRetries: -1})
	if _, err := p.Stream(t.Context(), Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}}, nil); !errors.Is(err, ErrIdleTimeout) {
		t.Fatalf("backend that never answers: %v", err)
	}
	waitClosed(t, silent, "unanswered request")
}
