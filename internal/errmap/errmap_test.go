package errmap_test

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/cron"
	"github.com/zeroclaw-go/zeroclaw/internal/errmap"
	"github.com/zeroclaw-go/zeroclaw/internal/i18n"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/logs"
	"github.com/zeroclaw-go/zeroclaw/internal/memory"
	"github.com/zeroclaw-go/zeroclaw/internal/pairing"
	"github.com/zeroclaw-go/zeroclaw/internal/provider"
	"github.com/zeroclaw-go/zeroclaw/internal/quickstart"
	"github.com/zeroclaw-go/zeroclaw/internal/session"
	"github.com/zeroclaw-go/zeroclaw/internal/skills"
	"github.com/zeroclaw-go/zeroclaw/internal/sop"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
	"github.com/zeroclaw-go/zeroclaw/internal/tools"
	"github.com/zeroclaw-go/zeroclaw/internal/upload"
	"github.com/zeroclaw-go/zeroclaw/internal/workspace"
)

// Each sentinel, wrapped as a domain wraps it, maps to what the four mappers answered before they became one
// table: the native code, ACP's (0: unmapped, -32603), the gateway's status, not-found and the chat frame code.
func TestTable(t *testing.T) {
	t.Parallel()
	const (
		notFound = api.CodeSessionNotFound
		invalid  = api.CodeInvalidParams
		busy     = api.CodeSessionBusy
		denied   = api.CodeForbidden
	)
	for _, tc := range []struct {
		err      error
		code     int
		acp      int
		status   int
		notFound bool
		chat     string
	}{
		{session.ErrNotFound, notFound, notFound, 404, true, ""},
		{session.ErrNoActiveTurn, notFound, 0, 404, false, ""},
		{session.ErrClosed, notFound, notFound, 404, false, ""},
		{session.ErrKilled, notFound, notFound, 404, false, ""},
		{session.ErrLimit, api.CodeSessionLimitReached, api.CodeSessionLimitReached, 429, false, ""},
		{session.ErrQueueFull, busy, busy, 409, false, "SESSION_QUEUE_FULL"},
		{session.ErrQueueTimeout, busy, busy, 409, false, "SESSION_QUEUE_TIMEOUT"},
		{session.ErrBusy, busy, busy, 409, false, "SESSION_QUEUE_FULL"},
		{store.ErrBusy, busy, busy, 409, false, "SESSION_QUEUE_FULL"},
		{session.ErrNotOwned, api.CodeSessionNotOwned, notFound, 403, false, ""},
		{session.ErrInvalid, invalid, invalid, 400, false, ""},
		{upload.ErrInvalid, invalid, 0, 400, false, ""},
		{session.ErrAgentDenied, denied, 0, 403, false, ""},
		{session.ErrAgentNotAllowed, denied, denied, 403, false, ""},
		{upload.ErrForbidden, denied, 0, 403, false, ""},
		{session.ErrApprovalCapped, denied, 0, 403, false, ""},
		{config.ErrInvalidConfig, invalid, 0, 400, false, ""},
		{config.ErrUnknownProp, invalid, 0, 400, false, ""},
		{config.ErrInvalidPath, invalid, 0, 400, false, ""},
		{config.ErrInvalidValue, invalid, 0, 400, false, ""},
		{config.ErrNotEditable, invalid, 0, 400, false, ""},
		{config.ErrNoEntries, invalid, 0, 400, false, ""},
		{config.ErrTooManyEntries, invalid, 0, 400, false, ""},
		{config.ErrNoMapSection, invalid, 0, 400, false, ""},
		{config.ErrInvalidKey, invalid, 0, 400, false, ""},
		{config.ErrDrifted, api.CodePreconditionFailed, 0, 409, false, ""},
		{config.ErrTestFailed, api.CodePreconditionFailed, 0, 409, false, ""},
		{cron.ErrNotFound, invalid, 0, 404, true, ""},
		{cron.ErrInvalid, invalid, 0, 400, false, ""},
		{cron.ErrSchedule, invalid, 0, 400, false, ""},
		{cron.ErrBusy, busy, 0, 409, false, ""},
		{pairing.ErrNotFound, api.CodeNotFound, 0, 404, true, ""},
		{pairing.ErrDisabled, api.CodePreconditionFailed, 0, 409, false, ""},
		{pairing.ErrInvalidCode, invalid, 0, 400, false, ""},
		{pairing.ErrUnknownProfile, invalid, 0, 400, false, ""},
		{workspace.ErrNotEditable, invalid, 0, 400, false, ""},
		{workspace.ErrTooLong, invalid, 0, 400, false, ""},
		{workspace.ErrUnknownAgent, invalid, 0, 400, false, ""},
		{skills.ErrInvalid, invalid, 0, 400, false, ""},
		{quickstart.ErrInvalid, invalid, 0, 400, false, ""},
		{skills.ErrNotFound, invalid, 0, 404, true, ""},
		{sop.ErrAlreadyExists, api.CodeSopAlreadyExists, 0, 409, false, ""},
		{sop.ErrInvalidName, invalid, 0, 400, false, ""},
		{sop.ErrInvalid, invalid, 0, 400, false, ""},
		{sop.ErrNotFound, api.CodeSopNotFound, 0, 404, true, ""},
		{memory.ErrInvalid, invalid, 0, 400, false, ""},
		{memory.ErrForeign, invalid, 0, 400, false, ""},
		{memory.ErrLocked, invalid, 0, 400, false, ""},
		{memory.ErrNotFound, api.CodeNotFound, 0, 404, true, ""},
		{memory.ErrUnavailable, api.CodeInternalError, 0, 500, false, ""},
		{memory.ErrUnsupported, api.CodeInternalError, 0, 500, false, ""},
		{logs.ErrNotFound, api.CodeInternalError, 0, 404, true, ""},
		{i18n.ErrBadRequest, invalid, 0, 400, false, ""},
		{i18n.ErrFetch, api.CodeInternalError, 0, 500, false, ""},
		{tools.ErrParamDomain, invalid, 0, 400, false, ""},
		{provider.ErrModelList, api.CodeInternalError, 0, 500, false, ""},
	} {
		t.Run(tc.err.Error(), func(t *testing.T) {
			err := fmt.Errorf("%w: sess-1: detail", tc.err)
			we := errmap.RPC(err)
			if we == nil || we.Code != tc.code || we.Message != err.Error() || !errors.Is(we, tc.err) {
				t.Errorf("RPC = %+v, want code %d with the error's text and cause", we, tc.code)
			}
			got := errmap.ACP(err)
			switch {
			case tc.acp == 0 && got != nil:
				t.Errorf("ACP = %+v, want unmapped", got)
			case tc.acp != 0 && (got == nil || got.Code != tc.acp || got.Message != err.Error()):
				t.Errorf("ACP = %+v, want code %d", got, tc.acp)
			}
			// The gateway sees the native mapper's error, its cause the domain error.
			if s := errmap.HTTPStatus(we); s != tc.status {
				t.Errorf("HTTPStatus = %d, want %d", s, tc.status)
			}
			if nf := errmap.NotFound(we); nf != tc.notFound {
				t.Errorf("NotFound = %v, want %v", nf, tc.notFound)
			}
			if c := errmap.ChatCode(err); c != tc.chat {
				t.Errorf("ChatCode = %q, want %q", c, tc.chat)
			}
		})
	}
	if n := len(errmap.Table()); n != 56 {
		t.Errorf("the table has %d rows and the test %d: add the new row's expectations here", n, 56)
	}
}

// Every row's status is what its code means over HTTP, except that a not-found row is 404: one rule, so a new
// row cannot pick a status its code contradicts by accident.
func TestTableStatusesFollowCodes(t *testing.T) {
	t.Parallel()
	for _, e := range errmap.Table() {
		want := errmap.StatusOf(e.Code)
		if e.NotFound {
			want = http.StatusNotFound
		}
		if e.Status != want {
			t.Errorf("%v: status %d, want %d (code %d, not-found %v)", e.Err, e.Status, want, e.Code, e.NotFound)
		}
	}
}

// ErrBusy's two kinds are distinct sentinels that both match ErrBusy and keep its text on the wire.
func TestBusyKinds(t *testing.T) {
	t.Parallel()
	full := fmt.Errorf("%w: s1: 8 prompts already queued", session.ErrQueueFull)
	waited := fmt.Errorf("%w: s1: waited 30s for the running turn", session.ErrQueueTimeout)
	for _, err := range []error{full, waited} {
		if !errors.Is(err, session.ErrBusy) {
			t.Errorf("%v does not match ErrBusy", err)
		}
	}
	if errors.Is(full, session.ErrQueueTimeout) || errors.Is(waited, session.ErrQueueFull) {
		t.Error("the two busy kinds match each other")
	}
	if full.Error() != "session: busy: s1: 8 prompts already queued" {
		t.Errorf("text %q", full.Error())
	}
	if errmap.ChatCode(full) != errmap.ChatQueueFull || errmap.ChatCode(waited) != errmap.ChatQueueTimeout {
		t.Errorf("chat codes %q %q", errmap.ChatCode(full), errmap.ChatCode(waited))
	}
}

// Structured detail goes out as data: a config entry's index and prop, a domain error's WireData.
func TestData(t *testing.T) {
	t.Parallel()
	ee := &config.EntryError{Index: 2, Prop: "gateway.port", Err: config.ErrInvalidValue}
	if we := errmap.RPC(ee); we == nil || !reflect.DeepEqual(we.Data, map[string]any{"index": 2, "prop": "gateway.port"}) {
		t.Errorf("entry error data = %+v", we)
	}
	single := &config.EntryError{Prop: "gateway.port", Err: config.ErrInvalidValue, Single: true}
	if we := errmap.RPC(single); we == nil || !reflect.DeepEqual(we.Data, map[string]any{"prop": "gateway.port"}) {
		t.Errorf("single entry error data = %+v", we)
	}
	wd := wireData{session.ErrInvalid}
	if we := errmap.RPC(wd); we == nil || we.Data != "detail" {
		t.Errorf("RPC data = %+v", we)
	}
	if we := errmap.ACP(wd); we == nil || we.Data != "detail" {
		t.Errorf("ACP data = %+v", we)
	}
}

type wireData struct{ error }

func (w wireData) Unwrap() error { return w.error }
func (wireData) WireData() any   { return "detail" }
func (w wireData) Error() string { return w.error.Error() }

// An error wrapping a not-found sentinel under another keeps the outer row's code but is 404 over HTTP; an error
// no row names has no mapping, and over HTTP takes its code's status.
func TestPrecedenceAndUnknown(t *testing.T) {
	t.Parallel()
	both := fmt.Errorf("%w: %w", session.ErrInvalid, memory.ErrNotFound)
	we := errmap.RPC(both)
	if we == nil || we.Code != api.CodeInvalidParams || errmap.HTTPStatus(we) != http.StatusNotFound {
		t.Errorf("both: %+v status %d", we, errmap.HTTPStatus(we))
	}
	plain := errors.New("disk on fire")
	if errmap.RPC(plain) != nil || errmap.ACP(plain) != nil || errmap.ChatCode(plain) != "" || errmap.NotFound(plain) {
		t.Error("an unknown error was mapped")
	}
	if s := errmap.HTTPStatus(plain); s != http.StatusInternalServerError {
		t.Errorf("plain error status %d", s)
	}
	grant := jsonrpc.NewError(api.CodeForbidden, "Forbidden: missing grant x", nil)
	if s := errmap.HTTPStatus(grant); s != http.StatusForbidden {
		t.Errorf("grant error status %d", s)
	}
	if errmap.RPC(nil) != nil || errmap.ACP(nil) != nil || errmap.NotFound(nil) {
		t.Error("nil was mapped")
	}
}
