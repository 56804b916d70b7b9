// Package errmap is the one table from the domains' sentinel errors to what each surface answers: the native
// protocol's JSON-RPC code, ACP's, the HTTP status of a gateway route, whether the error says that what the
// request names does not exist, and the code of a /ws/chat error frame. rpc, acp, the gateway and the daemon's
// /ws/chat adapter all map errors through it, with errors.Is; nothing reads an error's text.
package errmap

import (
	"errors"
	"net/http"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
	"github.com/zeroclaw-go/zeroclaw/internal/cron"
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

// Entry is what one domain sentinel becomes on each surface.
type Entry struct {
	Err  error // the sentinel, matched with errors.Is
	Code int   // the native protocol's JSON-RPC code
	// ACP is ACP's code; 0: ACP does not map the error, which goes out as -32603 "Internal error" (acp.md maps
	// only the session layer's not-found, limit, busy and invalid errors).
	ACP int
	// Status is the HTTP status a gateway route answers.
	Status int
	// NotFound: what the request names does not exist (a session, cron job, skill, device, memory or log
	// event). Several of those share a code with bad params (upstream's codes); a REST route answers 404.
	NotFound bool
	// Chat is the code of the /ws/chat error frame for a turn that could not start; "": the frame's generic one.
	Chat string
}

// Chat error frame codes (upstream's ws.rs).
const (
	ChatQueueFull    = "SESSION_QUEUE_FULL"
	ChatQueueTimeout = "SESSION_QUEUE_TIMEOUT"
)

const (
	badRequest = http.StatusBadRequest
	notFound   = http.StatusNotFound
	conflict   = http.StatusConflict
	forbidden  = http.StatusForbidden
	internal   = http.StatusInternalServerError
)

// table is searched in order: an error that wraps several sentinels gets the first row's codes (NotFound
// excepted: any not-found row that matches makes the error not-found, see HTTPStatus).
var table = []Entry{
	{Err: session.ErrNotFound, Code: api.CodeSessionNotFound, ACP: api.CodeSessionNotFound, Status: notFound, NotFound: true},
	{Err: session.ErrNoActiveTurn, Code: api.CodeSessionNotFound, Status: notFound},
	{Err: session.ErrClosed, Code: api.CodeSessionNotFound, ACP: api.CodeSessionNotFound, Status: notFound},
	{Err: session.ErrKilled, Code: api.CodeSessionNotFound, ACP: api.CodeSessionNotFound, Status: notFound},
	{Err: session.ErrLimit, Code: api.CodeSessionLimitReached, ACP: api.CodeSessionLimitReached, Status: http.StatusTooManyRequests},
	{Err: session.ErrQueueFull, Code: api.CodeSessionBusy, ACP: api.CodeSessionBusy, Status: conflict, Chat: ChatQueueFull},
	{Err: session.ErrQueueTimeout, Code: api.CodeSessionBusy, ACP: api.CodeSessionBusy, Status: conflict, Chat: ChatQueueTimeout},
	{Err: session.ErrBusy, Code: api.CodeSessionBusy, ACP: api.CodeSessionBusy, Status: conflict, Chat: ChatQueueFull},
	// A session whose turn another daemon sharing the PostgreSQL database runs (package pgchat's turn lease).
	{Err: store.ErrBusy, Code: api.CodeSessionBusy, ACP: api.CodeSessionBusy, Status: conflict, Chat: ChatQueueFull},
	// ACP answers a session another principal owns as one that does not exist.
	{Err: session.ErrNotOwned, Code: api.CodeSessionNotOwned, ACP: api.CodeSessionNotFound, Status: forbidden},
	{Err: session.ErrInvalid, Code: api.CodeInvalidParams, ACP: api.CodeInvalidParams, Status: badRequest},
	{Err: upload.ErrInvalid, Code: api.CodeInvalidParams, Status: badRequest},
	{Err: session.ErrAgentDenied, Code: api.CodeForbidden, Status: forbidden},
	{Err: session.ErrAgentNotAllowed, Code: api.CodeForbidden, ACP: api.CodeForbidden, Status: forbidden},
	{Err: upload.ErrForbidden, Code: api.CodeForbidden, Status: forbidden},
	{Err: session.ErrApprovalCapped, Code: api.CodeForbidden, Status: forbidden},

	{Err: config.ErrInvalidConfig, Code: api.CodeInvalidParams, Status: badRequest},
	{Err: config.ErrUnknownProp, Code: api.CodeInvalidParams, Status: badRequest},
	{Err: config.ErrInvalidPath, Code: api.CodeInvalidParams, Status: badRequest},
	{Err: config.ErrInvalidValue, Code: api.CodeInvalidParams, Status: badRequest},
	{Err: config.ErrNotEditable, Code: api.CodeInvalidParams, Status: badRequest},
	{Err: config.ErrNoEntries, Code: api.CodeInvalidParams, Status: badRequest},
	{Err: config.ErrTooManyEntries, Code: api.CodeInvalidParams, Status: badRequest},
	{Err: config.ErrNoMapSection, Code: api.CodeInvalidParams, Status: badRequest},
	{Err: config.ErrInvalidKey, Code: api.CodeInvalidParams, Status: badRequest},
	{Err: config.ErrDrifted, Code: api.CodePreconditionFailed, Status: conflict},
	{Err: config.ErrTestFailed, Code: api.CodePreconditionFailed, Status: conflict},

	{Err: i18n.ErrBadRequest, Code: api.CodeInvalidParams, Status: badRequest},
	{Err: i18n.ErrFetch, Code: api.CodeInternalError, Status: internal},
	{Err: tools.ErrParamDomain, Code: api.CodeInvalidParams, Status: badRequest},
	{Err: provider.ErrModelList, Code: api.CodeInternalError, Status: internal},

	{Err: cron.ErrNotFound, Code: api.CodeInvalidParams, Status: notFound, NotFound: true},
	{Err: cron.ErrInvalid, Code: api.CodeInvalidParams, Status: badRequest},
	{Err: cron.ErrSchedule, Code: api.CodeInvalidParams, Status: badRequest},
	{Err: cron.ErrBusy, Code: api.CodeSessionBusy, Status: conflict},

	{Err: pairing.ErrNotFound, Code: api.CodeNotFound, Status: notFound, NotFound: true},
	{Err: pairing.ErrDisabled, Code: api.CodePreconditionFailed, Status: conflict},
	{Err: pairing.ErrInvalidCode, Code: api.CodeInvalidParams, Status: badRequest},
	{Err: pairing.ErrUnknownProfile, Code: api.CodeInvalidParams, Status: badRequest},

	{Err: workspace.ErrNotEditable, Code: api.CodeInvalidParams, Status: badRequest},
	{Err: workspace.ErrTooLong, Code: api.CodeInvalidParams, Status: badRequest},
	{Err: workspace.ErrUnknownAgent, Code: api.CodeInvalidParams, Status: badRequest},

	// A skill that is not there is invalid params on the wire, as upstream answers it.
	{Err: skills.ErrInvalid, Code: api.CodeInvalidParams, Status: badRequest},
	{Err: quickstart.ErrInvalid, Code: api.CodeInvalidParams, Status: badRequest},
	{Err: skills.ErrNotFound, Code: api.CodeInvalidParams, Status: notFound, NotFound: true},

	// SOP authoring (upstream's codes): create of an existing SOP -32020, delete of a missing one -32021; a
	// sops/get of a missing one is invalid params (the library wraps it as ErrInvalid), as upstream answers it.
	// ErrInvalid comes first: a sops/get of a missing SOP is both, -32602 on the wire and a 404 on a route.
	{Err: sop.ErrAlreadyExists, Code: api.CodeSopAlreadyExists, Status: conflict},
	{Err: sop.ErrInvalidName, Code: api.CodeInvalidParams, Status: badRequest},
	{Err: sop.ErrInvalid, Code: api.CodeInvalidParams, Status: badRequest},
	{Err: sop.ErrNotFound, Code: api.CodeSopNotFound, Status: notFound, NotFound: true},

	// A missing memory key is the not-found code (upstream's -32603 made it look like a daemon failure); an
	// absent or unable store is -32603 with its message.
	{Err: memory.ErrInvalid, Code: api.CodeInvalidParams, Status: badRequest},
	{Err: memory.ErrForeign, Code: api.CodeInvalidParams, Status: badRequest},
	{Err: memory.ErrLocked, Code: api.CodeInvalidParams, Status: badRequest},
	{Err: memory.ErrNotFound, Code: api.CodeNotFound, Status: notFound, NotFound: true},
	{Err: memory.ErrUnavailable, Code: api.CodeInternalError, Status: internal},
	{Err: memory.ErrUnsupported, Code: api.CodeInternalError, Status: internal},

	// logs/get answers an unknown id -32603 with upstream's message (rpc's logsError); a REST route 404.
	{Err: logs.ErrNotFound, Code: api.CodeInternalError, Status: notFound, NotFound: true},
}

// Table returns a copy of the table, in the order it is searched.
func Table() []Entry { return append([]Entry(nil), table...) }

// Lookup returns the first entry whose sentinel err wraps.
func Lookup(err error) (Entry, bool) {
	if err == nil {
		return Entry{}, false
	}
	for _, e := range table {
		if errors.Is(err, e.Err) {
			return e, true
		}
	}
	return Entry{}, false
}

// RPC is the native protocol's error mapper (router.Options.MapError): a domain error becomes its code, its
// text the message, with the structured detail the error carries as data and the error itself as the cause;
// nil for an error no row names.
func RPC(err error) *jsonrpc.Error {
	e, ok := Lookup(err)
	if !ok {
		return nil
	}
	var data any
	if de, ok := errors.AsType[dataError](err); ok {
		data = de.WireData()
	}
	if ee, ok := errors.AsType[*config.EntryError](err); ok {
		if ee.Single {
			data = map[string]any{"prop": ee.Prop}
		} else {
			data = map[string]any{"index": ee.Index, "prop": ee.Prop}
		}
	}
	return jsonrpc.NewError(e.Code, err.Error(), data).WithCause(err)
}

// ACP is ACP's error mapper: the first row with an ACP code that err wraps, its text the message, the detail
// the error carries as data; nil for an error ACP does not map.
func ACP(err error) *jsonrpc.Error {
	if err == nil {
		return nil
	}
	for _, e := range table {
		if e.ACP != 0 && errors.Is(err, e.Err) {
			var data any
			if de, ok := errors.AsType[dataError](err); ok {
				data = de.WireData()
			}
			return jsonrpc.NewError(e.ACP, err.Error(), data).WithCause(err)
		}
	}
	return nil
}

// dataError is a domain error that carries structured detail for the error's data member.
type dataError interface {
	error
	WireData() any
}

// NotFound reports whether err says that what the request names does not exist (any not-found row matches).
func NotFound(err error) bool {
	if err == nil {
		return false
	}
	for _, e := range table {
		if e.NotFound && errors.Is(err, e.Err) {
			return true
		}
	}
	return false
}

// HTTPStatus is the status a gateway route answers for a method's error (a *jsonrpc.Error, whose cause is the
// domain error it was mapped from): 404 when it is not-found, else its row's status, else the status of its
// code (StatusOf); 500 for an error that is no *jsonrpc.Error.
func HTTPStatus(err error) int {
	if NotFound(err) {
		return notFound
	}
	if e, ok := Lookup(err); ok {
		return e.Status
	}
	if je, ok := errors.AsType[*jsonrpc.Error](err); ok {
		return StatusOf(je.Code)
	}
	return internal
}

// StatusOf maps a JSON-RPC code to an HTTP status, for the errors no row names (the grant check, a handler's
// own checks of its params).
func StatusOf(code int) int {
	switch code {
	case api.CodeAuthRequired:
		return http.StatusUnauthorized
	case api.CodeForbidden, api.CodeSessionNotOwned:
		return forbidden
	case api.CodeInvalidParams, api.CodeInvalidRequest, api.CodeParseError:
		return badRequest
	case api.CodeSessionNotFound, api.CodeMethodNotFound, api.CodeFsNotFound:
		return notFound
	case api.CodeSessionBusy, api.CodePreconditionFailed, api.CodeSopAlreadyExists:
		return conflict
	case api.CodeSopNotFound:
		return notFound
	case api.CodeSessionLimitReached:
		return http.StatusTooManyRequests
	}
	return internal
}

// ChatCode is the /ws/chat error frame code for a turn that could not start with err; "" when err has none
// (the frame then carries the generic code).
func ChatCode(err error) string {
	if e, ok := Lookup(err); ok {
		return e.Chat
	}
	return ""
}
