package discord_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/channel"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/chantest"
	"github.com/zeroclaw-go/zeroclaw/internal/channel/discord"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

const (
	hostileCh     = "6100000000000000001"
	hostileCursor = 1200000000000000000
)

// pageServer answers GET /api/v10/channels/{id}/messages with pages from next (called with the request's
// path and query) and counts the calls.
type pageServer struct {
	*httptest.Server
	mu    sync.Mutex
	calls []string
}

func newPageServer(t testing.TB, next func(call int, r *http.Request) (int, string)) *pageServer {
	p := &pageServer{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.calls = append(p.calls, r.URL.RequestURI())
		n := len(p.calls)
		p.mu.Unlock()
		status, body := next(n, r)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *pageServer) Calls() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.calls...)
}

func hostileAdapter(t testing.TB, url string) *discord.Adapter {
	a, err := discord.New(channel.ID{Type: "discord", Alias: "default"}, config.DiscordConfig{BotToken: token, APIBaseURL: url}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	discord.NoteCursor(a, hostileCh, strconv.Itoa(hostileCursor), "")
	return a
}

func msg(id int, ch, text string) map[string]any {
	return map[string]any{"id": strconv.Itoa(id), "channel_id": ch, "type": 0, "content": text,
		"author": map[string]any{"id": owner, "username": "o"}}
}

// A hostile page (another channel's messages, ids at or before the cursor, duplicates, junk, newest first)
// delivers only this channel's messages after the cursor, once each and oldest first; a full page of nothing
// new ends the catch-up instead of asking again forever; the other channel gets no cursor.
func TestDiscordCatchUpHostilePages(t *testing.T) {
	srv := newPageServer(t, func(call int, r *http.Request) (int, string) {
		var page []any
		if call == 1 {
			for i := 50; i >= 1; i-- {
				page = append(page, msg(hostileCursor+i, hostileCh, fmt.Sprint("new ", i)))
			}
			for i := range 20 {
				page = append(page, msg(hostileCursor+100+i, "6200000000000000001", "elsewhere"), msg(hostileCursor-i, hostileCh, "old"))
			}
			page = append(page, msg(hostileCursor+7, hostileCh, "new 7 again"), "junk", 42, nil, map[string]any{"id": "x"})
			page = append(page, msg(hostileCursor, hostileCh, "the cursor itself"))
			for len(page) < 100 {
				page = append(page, msg(hostileCursor-1, hostileCh, "old"))
			}
		} else { // a full page of messages already read: nothing after the new cursor
			for range 100 {
				page = append(page, msg(hostileCursor+3, hostileCh, "replayed"))
			}
		}
		b, _ := json.Marshal(page)
		return 200, string(b)
	})
	a := hostileAdapter(t, srv.URL)
	d := &chantest.Deliverer{}
	if err := discord.CatchUp(context.Background(), a, d); err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, ev := range d.Events() {
		texts = append(texts, ev.Text)
		if ev.ReplyTarget != hostileCh {
			t.Errorf("delivered %+v from another channel", ev)
		}
	}
	want := make([]string, 50)
	for i := range want {
		want[i] = fmt.Sprint("new ", i+1)
	}
	// The duplicate of message 7 comes through too (its id dedupes it in the core's record), never the rest.
	got := strings.Join(texts, "|")
	if strings.Contains(got, "old") || strings.Contains(got, "elsewhere") || strings.Contains(got, "cursor itself") || strings.Contains(got, "replayed") {
		t.Fatalf("delivered %q", texts)
	}
	for i, w := range want {
		if !strings.Contains("|"+got+"|", "|"+w+"|") {
			t.Fatalf("message %d (%q) not delivered: %q", i+1, w, texts)
		}
	}
	if c := discord.Cursor(a, hostileCh); c != strconv.Itoa(hostileCursor+50) {
		t.Fatalf("cursor %s, want the newest delivered id", c)
	}
	if discord.Cursors(a) != 1 {
		t.Fatalf("%d channels remembered: the other channel's messages made a cursor", discord.Cursors(a))
	}
	if calls := srv.Calls(); len(calls) != 2 || !strings.Contains(calls[1], "after="+strconv.Itoa(hostileCursor+50)) {
		t.Fatalf("calls %v: want the page and one more after the new cursor", calls)
	}
}

// A server that always has a full page of new messages is read for 10 pages, not forever; a channel the bot
// can no longer read (404) is forgotten; a 5xx is an error (the catch-up stays pending).
func TestDiscordCatchUpBounds(t *testing.T) {
	next := hostileCursor
	var mu sync.Mutex
	srv := newPageServer(t, func(call int, r *http.Request) (int, string) {
		mu.Lock()
		defer mu.Unlock()
		var page []any
		for range 100 {
			next++
			page = append([]any{msg(next, hostileCh, "flood")}, page...)
		}
		b, _ := json.Marshal(page)
		return 200, string(b)
	})
	a := hostileAdapter(t, srv.URL)
	d := &chantest.Deliverer{}
	if err := discord.CatchUp(context.Background(), a, d); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Calls()); n != 10 || len(d.IDs()) != 1000 {
		t.Fatalf("%d pages read, %d delivered: want the bound of 10 pages", n, len(d.IDs()))
	}

	for status, forget := range map[int]bool{404: true, 403: true, 502: false} {
		srv := newPageServer(t, func(int, *http.Request) (int, string) { return status, `{"message":"no","code":10003}` })
		a := hostileAdapter(t, srv.URL)
		err := discord.CatchUp(context.Background(), a, &chantest.Deliverer{})
		if forget && (err != nil || discord.Cursors(a) != 0) || !forget && (err == nil || discord.Cursors(a) != 1) {
			t.Errorf("status %d: err %v, %d cursors", status, err, discord.Cursors(a))
		}
	}
}

// Whatever a page holds, the catch-up delivers only this channel's messages after the cursor and never moves
// the cursor back.
func FuzzDiscordCatchUpPage(f *testing.F) {
	f.Add(`[{"id":"1200000000000000005","channel_id":"6100000000000000001","type":0,"content":"hi","author":{"id":"4242"}}]`)
	f.Add(`[{"id":"1","channel_id":"6100000000000000001","type":0,"content":"old","author":{"id":"4242"}},null,"x"]`)
	f.Add(`{"not":"a list"}`)
	f.Add(`[{"id":"99999999999999999999","channel_id":"6100000000000000001","type":0,"content":"far","author":{"id":"4242"}}]`)
	// One server for the whole run, answering the body of the input being run (a server per input made the
	// target run at ~90 inputs/s); each input gets a fresh adapter and its cursor.
	var mu sync.Mutex
	var page string
	srv := newPageServer(f, func(int, *http.Request) (int, string) {
		mu.Lock()
		defer mu.Unlock()
		return 200, page
	})
	f.Fuzz(func(t *testing.T, body string) {
		mu.Lock()
		page = body
		mu.Unlock()
		a := hostileAdapter(t, srv.URL)
		d := &chantest.Deliverer{}
		_ = discord.CatchUp(context.Background(), a, d)
		cur := discord.Cursor(a, hostileCh)
		if len(cur) < len(strconv.Itoa(hostileCursor)) || len(cur) == len(strconv.Itoa(hostileCursor)) && cur < strconv.Itoa(hostileCursor) {
			t.Fatalf("cursor moved back to %q", cur)
		}
		for _, ev := range d.Events() {
			if ev.ReplyTarget != hostileCh || len(ev.EventID) < len(strconv.Itoa(hostileCursor)) ||
				len(ev.EventID) == len(strconv.Itoa(hostileCursor)) && ev.EventID <= strconv.Itoa(hostileCursor) {
				t.Fatalf("delivered %+v", ev)
			}
		}
		if discord.Cursors(a) != 1 {
			t.Fatalf("%d cursors", discord.Cursors(a))
		}
	})
}
