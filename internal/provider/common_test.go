package provider

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// familyCase describes one HTTP family for the behaviour every family shares.
type familyCase struct {
	family      string
	contentType string
	fixture     string // a complete text answer "Hello, world!"
	firstText   []byte // frames that produce exactly one text event "Hel"
}

var httpFamilies = []familyCase{
	{"openai", "text/event-stream", "openai_text.sse",
		[]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n")},
	{"ollama", "application/x-ndjson", "ollama_text.ndjson",
		[]byte("{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"Hel\"},\"done\":false}\n")},
	{"anthropic", "text/event-stream", "anthropic_text.sse", []byte(
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n" +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n")},
}

const (
	testKey         = "sk-test-SECRET-0123456789"
	testHeaderValue = "org-secret-header-value"
)

func (fc familyCase) provider(t *testing.T, url string, mod func(*Settings)) Provider {
	t.Helper()
	s := Settings{Family: fc.family, Alias: "test", URI: url, APIKey: testKey, Model: "m",
		ExtraHeaders: map[string]string{"X-Org-Token": testHeaderValue}, RetryBase: time.Millisecond}
	if mod != nil {
		mod(&s)
	}
	p, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func hi() Request { return Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}} }

// assertSafeError checks err names alias and leaks none of the secrets.
func assertSafeError(t *testing.T, err error, alias string, secrets ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("expected an error")
	}
	msg := err.Error()
	if !strings.Contains(msg, alias) {
		t.Errorf("error %q does not name %s", msg, alias)
	}
	for _, s := range secrets {
		if strings.Contains(msg, s) {
			t.Errorf("error leaks a secret: %q", msg)
		}
	}
}

func TestFamiliesStreamInOrder(t *testing.T) {
	t.Parallel()
	for _, fc := range httpFamilies {
		t.Run(fc.family, func(t *testing.T) {
			srv := newFakeBackend(t, streamFixture(t, fc.contentType, fc.fixture))
			p := fc.provider(t, srv.URL, nil)
			var texts []string
			res, err := p.Stream(t.Context(), hi(), func(ev Event) {
				if ev.Type == EventText {
					texts = append(texts, ev.Text)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(texts, "|") != "Hello|, wor|ld!" || res.Text != "Hello, world!" {
				t.Fatalf("texts %q result %q", texts, res.Text)
			}
			if res.Usage.InputTokens == 0 || res.Usage.OutputTokens == 0 || res.Usage.Model == "" {
				t.Fatalf("usage not parsed: %+v", res.Usage)
			}
			r := srv.requests()[0]
			if r.Header.Get("X-Org-Token") != testHeaderValue {
				t.Fatalf("extra header missing: %v", r.Header)
			}
			if r.decode(t)["stream"] != true {
				t.Fatal("stream flag not set")
			}
		})
	}
}

func TestFamiliesRetry429ThenSuccess(t *testing.T) {
	t.Parallel()
	for _, fc := range httpFamilies {
		t.Run(fc.family, func(t *testing.T) {
			srv := newFakeBackend(t,
				status(429, `{"error":"rate limited"}`, "Retry-After", "0"),
				hangUp,
				streamFixture(t, fc.contentType, fc.fixture))
			p := fc.provider(t, srv.URL, nil)
			res, err := p.Stream(t.Context(), hi(), func(Event) {})
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != "Hello, world!" {
				t.Fatalf("text %q", res.Text)
			}
			reqs := srv.requests()
			if len(reqs) != 3 {
				t.Fatalf("%d attempts, want 3 (429, connection drop, success)", len(reqs))
			}
			if string(reqs[0].Body) != string(reqs[2].Body) {
				t.Fatal("retry sent a different body")
			}
		})
	}
}

func TestFamiliesServerErrorExhaustsRetries(t *testing.T) {
	t.Parallel()
	for _, fc := range httpFamilies {
		t.Run(fc.family, func(t *testing.T) {
			srv := newFakeBackend(t, func(w http.ResponseWriter, r *http.Request) {
				status(500, "internal error; you sent key "+r.Header.Get("Authorization")+r.Header.Get("X-Api-Key")+
					" and token "+r.Header.Get("X-Org-Token"))(w, r)
			})
			p := fc.provider(t, srv.URL, func(s *Settings) { s.MaxRetries = 3 })
			_, err := p.Stream(t.Context(), hi(), func(Event) { t.Error("event emitted on a failed request") })
			var he *HTTPError
			if !errors.As(err, &he) {
				t.Fatalf("err = %v, want *HTTPError", err)
			}
			if he.Status != 500 || he.Alias != fc.family+".test" || !strings.Contains(he.Body, redacted) {
				t.Fatalf("HTTPError = %+v", he)
			}
			assertSafeError(t, err, fc.family+".test", testKey, testHeaderValue)
			if n := len(srv.requests()); n != 4 {
				t.Fatalf("%d attempts, want 1 + 3 retries", n)
			}
		})
	}
}

func TestFamiliesClientErrorNotRetried(t *testing.T) {
	t.Parallel()
	for _, fc := range httpFamilies {
		t.Run(fc.family, func(t *testing.T) {
			srv := newFakeBackend(t, status(401, `{"error":{"message":"invalid x-api-key `+testKey+`"}}`))
			p := fc.provider(t, srv.URL, nil)
			_, err := p.Stream(t.Context(), hi(), func(Event) {})
			var he *HTTPError
			if !errors.As(err, &he) || he.Status != 401 {
				t.Fatalf("err = %v, want HTTP 401", err)
			}
			assertSafeError(t, err, fc.family+".test", testKey)
			if n := len(srv.requests()); n != 1 {
				t.Fatalf("401 retried: %d attempts", n)
			}
		})
	}
}

func TestFamiliesCancelMidStream(t *testing.T) {
	t.Parallel()
	for _, fc := range httpFamilies {
		t.Run(fc.family, func(t *testing.T) {
			gone := make(chan struct{})
			srv := newFakeBackend(t, blockAfter(fc.contentType, fc.firstText, gone))
			p := fc.provider(t, srv.URL, nil)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var events int
			res, err := p.Stream(ctx, hi(), func(ev Event) {
				events++
				cancel()
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			assertSafeError(t, err, fc.family+".test", testKey)
			if events != 1 || res.Text != "Hel" {
				t.Fatalf("events %d, partial text %q", events, res.Text)
			}
			waitClosed(t, gone, "server observing the aborted request")
			if n := len(srv.requests()); n != 1 {
				t.Fatalf("cancelled request retried: %d attempts", n)
			}
		})
	}
}

func TestFamiliesCancelDuringBackoff(t *testing.T) {
	t.Parallel()
	for _, fc := range httpFamilies {
		t.Run(fc.family, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			srv := newFakeBackend(t, func(w http.ResponseWriter, r *http.Request) {
				cancel() // the client is now waiting an hour before its retry
				status(503, "busy")(w, r)
			})
			p := fc.provider(t, srv.URL, func(s *Settings) { s.RetryBase = time.Hour })
			_, err := p.Stream(ctx, hi(), func(Event) {})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if n := len(srv.requests()); n != 1 {
				t.Fatalf("%d attempts", n)
			}
		})
	}
}

func TestFamiliesStreamCutAfterEventsNotRetried(t *testing.T) {
	t.Parallel()
	for _, fc := range httpFamilies {
		t.Run(fc.family, func(t *testing.T) {
			srv := newFakeBackend(t, streamFrames(fc.contentType, fc.firstText))
			p := fc.provider(t, srv.URL, nil)
			res, err := p.Stream(t.Context(), hi(), func(Event) {})
			if !errors.Is(err, ErrIncomplete) {
				t.Fatalf("err = %v, want ErrIncomplete", err)
			}
			if res.Text != "Hel" {
				t.Fatalf("partial text %q", res.Text)
			}
			if n := len(srv.requests()); n != 1 {
				t.Fatalf("retried after emitting: %d attempts", n)
			}
		})
	}
}

func TestFamiliesMalformedChunk(t *testing.T) {
	t.Parallel()
	for _, fc := range httpFamilies {
		t.Run(fc.family, func(t *testing.T) {
			bad := "data: {not json\n\n"
			if fc.family == "ollama" {
				bad = "{not json\n"
			}
			srv := newFakeBackend(t, streamFrames(fc.contentType, []byte(bad)))
			p := fc.provider(t, srv.URL, nil)
			_, err := p.Stream(t.Context(), hi(), func(Event) {})
			if !errors.Is(err, ErrBadResponse) {
				t.Fatalf("err = %v, want ErrBadResponse", err)
			}
			assertSafeError(t, err, fc.family+".test", testKey)
		})
	}
}

func TestRetryAfterTooLongIsReported(t *testing.T) {
	t.Parallel()
	srv := newFakeBackend(t, status(429, strings.Repeat("slow down ", 1000), "Retry-After", "3600"))
	p := httpFamilies[0].provider(t, srv.URL, nil)
	_, err := p.Stream(t.Context(), hi(), func(Event) {})
	var he *HTTPError
	if !errors.As(err, &he) || he.Status != 429 {
		t.Fatalf("err = %v, want HTTP 429", err)
	}
	if len(he.Body) > maxErrorBody+len("…") {
		t.Fatalf("error body not truncated: %d bytes", len(he.Body))
	}
	if n := len(srv.requests()); n != 1 {
		t.Fatalf("waited for an hour-long Retry-After: %d attempts", n)
	}
}

func TestConnectionFailuresExhausted(t *testing.T) {
	t.Parallel()
	srv := newFakeBackend(t, hangUp)
	p := httpFamilies[0].provider(t, srv.URL, nil)
	_, err := p.Stream(t.Context(), hi(), func(Event) {})
	var he *HTTPError
	if err == nil || errors.As(err, &he) {
		t.Fatalf("err = %v, want a transport error", err)
	}
	assertSafeError(t, err, "openai.test", testKey)
	if n := len(srv.requests()); n != 3 {
		t.Fatalf("%d attempts, want 1 + 2 default retries", n)
	}
}

func TestNegativeMaxRetriesDisablesRetries(t *testing.T) {
	t.Parallel()
	srv := newFakeBackend(t, status(503, "busy"))
	p := httpFamilies[0].provider(t, srv.URL, func(s *Settings) { s.MaxRetries = -1 })
	if _, err := p.Stream(t.Context(), hi(), func(Event) {}); err == nil {
		t.Fatal("expected an error")
	}
	if n := len(srv.requests()); n != 1 {
		t.Fatalf("%d attempts, want 1", n)
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	future := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	for in, check := range map[string]func(time.Duration) bool{
		"":                              func(d time.Duration) bool { return d == 0 },
		"7":                             func(d time.Duration) bool { return d == 7*time.Second },
		"-3":                            func(d time.Duration) bool { return d == 0 },
		"soon":                          func(d time.Duration) bool { return d == 0 },
		future:                          func(d time.Duration) bool { return d > 30*time.Minute && d <= time.Hour },
		"Mon, 02 Jan 2006 15:04:05 GMT": func(d time.Duration) bool { return d == 0 },
	} {
		if d := parseRetryAfter(in); !check(d) {
			t.Errorf("parseRetryAfter(%q) = %v", in, d)
		}
	}
}
