package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync/atomic"
	"unicode/utf8"
)

// Request is a valid inbound request or notification.
//
// ID is the raw JSON id exactly as received (a number, string or null; 1.50 stays 1.50) so that it can be
// echoed byte for byte; a nil ID means the frame had no "id" key, i.e. it is a notification.
// Params is the raw params value, nil when absent.
type Request struct {
	ID     json.RawMessage
	Method string
	Params json.RawMessage

	release func() // returns the frame's Budget charge; set by Conn
	after   func() // set by AfterReply
	valid   bool   // Params are part of a frame Classify validated
	payload []byte // the raw bytes that followed the frame (payload.go), or nil
}

// ParamsValidated reports whether Params are known to be valid JSON (the request came from Classify, which
// validated its whole frame), so a decoder need not validate them again.
func (r *Request) ParamsValidated() bool { return r.valid }

// AfterReply registers fn to run once the response to r has been handed to the connection's writer, so that
// anything fn sends on the connection (notifications of a subscription it starts) goes out after that response.
// For a notification fn runs when the handler returns. It must be called from the handler's goroutine; a later
// call replaces an earlier one.
func (r *Request) AfterReply(fn func()) { r.after = fn }

// IsNotification reports whether the request carries no id and so expects no response.
func (r *Request) IsNotification() bool { return r.ID == nil }

// ReleaseParams tells the connection that the handler is done with Params (decoded them and keeps no
// reference): the frame's memory is released now instead of when the handler returns, which matters for a
// long-running handler. Params is nil afterwards. It must be called from the handler's goroutine; a second call
// does nothing.
func (r *Request) ReleaseParams() {
	if r.payload != nil {
		putPayloadBuf(r.payload)
	}
	r.Params, r.payload = nil, nil
	if r.release != nil {
		r.release()
		r.release = nil
	}
}

// Response is a valid inbound response to one of our outbound requests. Exactly one of Result and Error is
// set; a "result":null response has Result equal to the JSON literal null.
type Response struct {
	ID     json.RawMessage
	Result json.RawMessage
	Error  *Error
}

// Inbound is the classification of one frame (protocol.md §5). Exactly one of Request, Response, Reply and
// Drop is set.
type Inbound struct {
	Request  *Request
	Response *Response
	// Reply is the error to send back for an invalid frame.
	Reply *Error
	// ReplyID is the id to send Reply with: the frame's id when it was valid, else the JSON literal null.
	// It is never nil when Reply is set.
	ReplyID json.RawMessage
	// Drop is set for an invalid response-shaped frame: log its length only, send nothing.
	Drop bool
}

var jsonNull = json.RawMessage("null")

// Messages of the envelope errors (protocol.md §5), kept precise so a client author can see what is wrong.
const (
	msgParse      = "Parse error"
	msgBatch      = "Invalid Request: batch requests (JSON arrays) are not supported"
	msgNotObject  = "Invalid Request: a frame must be a JSON object"
	msgAmbiguous  = "Invalid Request: a frame must have a string method (request) or result/error without method (response)"
	msgVersion    = `Invalid Request: jsonrpc must be "2.0"`
	msgID         = "Invalid Request: id must be a string, number or null"
	msgParams     = "Invalid Request: params must be an object or array"
	msgMethodType = "Invalid Request: method must be a string"
)

// Classify parses and validates one frame (without its newline) according to protocol.md §5.
//
// Not JSON gives a -32700 reply; an array (batch), a non-object or an ambiguous object gives -32600 with id
// null; an invalid request-shaped object gives -32600 with its id when that id is valid, else null (this
// includes invalid notifications); an invalid response-shaped object is dropped. Keys are matched exactly
// (case-sensitive). A key that appears twice takes its last value, as encoding/json does for maps.
//
// The frame is not copied: a Request's Params and a Response's Result are slices of frame (IDs and methods are
// copies), so a large frame is held once, by whoever still uses its params.
func Classify(frame []byte) Inbound {
	if !Valid(frame) {
		return reply(CodeParseError, msgParse, nil)
	}
	switch firstByte(frame) {
	case '{':
	case '[':
		return reply(CodeInvalidRequest, msgBatch, nil)
	default: // including the literal null
		return reply(CodeInvalidRequest, msgNotObject, nil)
	}
	var env envelope
	for sc := scanMembers(frame); ; {
		key, val, ok := sc.next()
		if !ok {
			break
		}
		switch {
		case keyIs(key, "jsonrpc"):
			env.jsonrpc = val
		case keyIs(key, "id"):
			env.id = val
		case keyIs(key, "method"):
			env.method = val
		case keyIs(key, "params"):
			env.params = val
		case keyIs(key, "result"):
			env.result = val
		case keyIs(key, "error"):
			env.err = val
		}
	}
	env.small = len(frame) <= smallFrame
	hasMethod, hasResult, hasError := env.method != nil, env.result != nil, env.err != nil
	switch {
	case hasMethod && isString(env.method) && !hasResult && !hasError:
		return classifyRequest(&env)
	case !hasMethod && (hasResult || hasError):
		return classifyResponse(&env)
	default:
		if hasMethod && !isString(env.method) && !hasResult && !hasError {
			return reply(CodeInvalidRequest, msgMethodType, nil)
		}
		return reply(CodeInvalidRequest, msgAmbiguous, nil)
	}
}

// envelope holds the raw top-level members of a frame that matter to JSON-RPC; nil means absent. small: the
// frame is at most smallFrame bytes.
type envelope struct {
	jsonrpc, id, method, params, result, err json.RawMessage
	small                                    bool
}

// An id taken from a frame of at most smallFrame bytes is kept as a slice of it (frames are never reused); from a
// larger frame it is copied, so that it does not keep the frame alive after the params are released.
const smallFrame = 4 << 10

// keepID returns id, copied unless env's frame is small.
func (env *envelope) keepID(id json.RawMessage) json.RawMessage {
	if env.small {
		return id[:len(id):len(id)]
	}
	return bytes.Clone(id)
}

func classifyRequest(env *envelope) Inbound {
	hasID := env.id != nil
	idOK := !hasID || validID(env.id)
	replyID := json.RawMessage(nil)
	if hasID && idOK {
		replyID = env.keepID(env.id)
	}
	if !isVersion(env.jsonrpc) {
		return reply(CodeInvalidRequest, msgVersion, replyID)
	}
	if !idOK {
		return reply(CodeInvalidRequest, msgID, nil)
	}
	if env.params != nil && !isStructured(env.params) {
		return reply(CodeInvalidRequest, msgParams, replyID)
	}
	method, ok := methodName(env.method)
	if !ok { // cannot happen: isString checked the kind
		return reply(CodeInvalidRequest, msgMethodType, replyID)
	}
	return Inbound{Request: &Request{ID: replyID, Method: method, Params: env.params, valid: true}}
}

func classifyResponse(env *envelope) Inbound {
	drop := Inbound{Drop: true}
	if !isVersion(env.jsonrpc) || env.params != nil || env.id == nil || !validID(env.id) {
		return drop
	}
	if (env.result != nil) == (env.err != nil) {
		return drop
	}
	id := env.keepID(env.id)
	if env.result != nil {
		return Inbound{Response: &Response{ID: id, Result: env.result}}
	}
	e, ok := parseErrorObject(env.err)
	if !ok {
		return drop
	}
	return Inbound{Response: &Response{ID: id, Error: e}}
}

// methodNames caches recently seen method names, so the method of a frame usually costs no allocation: a slot
// per hash of the name, the last name stored wins. Names longer than maxCachedMethod are not cached.
var methodNames [64]atomic.Pointer[string]

const maxCachedMethod = 64

// methodName decodes a JSON string holding a method name.
func methodName(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || len(raw)-2 > maxCachedMethod || bytes.IndexByte(raw[1:len(raw)-1], '\\') >= 0 || !utf8.Valid(raw[1:len(raw)-1]) {
		var m string
		err := json.Unmarshal(raw, &m)
		return m, err == nil
	}
	inner := raw[1 : len(raw)-1]
	var h uint32 = 2166136261 // FNV-1a
	for _, c := range inner {
		h = (h ^ uint32(c)) * 16777619
	}
	slot := &methodNames[h%uint32(len(methodNames))]
	if p := slot.Load(); p != nil && *p == string(inner) {
		return *p, true
	}
	m := string(inner)
	slot.Store(&m)
	return m, true
}

// parseErrorObject validates {code:int, message:string, data?}. Other keys are ignored; data is kept raw.
func parseErrorObject(raw json.RawMessage) (*Error, bool) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return nil, false
	}
	code, ok := parseInt(fields["code"])
	if !ok {
		return nil, false
	}
	rawMsg, ok := fields["message"]
	if !ok || !isString(rawMsg) {
		return nil, false
	}
	e := &Error{Code: code}
	if err := json.Unmarshal(rawMsg, &e.Message); err != nil {
		return nil, false
	}
	if data, ok := fields["data"]; ok {
		e.Data = data
	}
	return e, true
}

// parseInt accepts a JSON integer literal (no fraction or exponent) that fits in an int.
func parseInt(raw json.RawMessage) (int, bool) {
	if len(raw) == 0 || !(raw[0] == '-' || isDigit(raw[0])) {
		return 0, false
	}
	n, err := strconv.ParseInt(string(raw), 10, 0)
	if err != nil {
		return 0, false
	}
	return int(n), true
}

func reply(code int, msg string, id json.RawMessage) Inbound {
	if id == nil {
		id = jsonNull
	}
	return Inbound{Reply: NewError(code, msg, nil), ReplyID: id}
}

// validID reports whether raw (a value produced by encoding/json) is a string, number or null.
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	switch c := raw[0]; {
	case c == '"', c == '-', isDigit(c):
		return true
	case c == 'n':
		return string(raw) == "null"
	}
	return false
}

func isVersion(raw json.RawMessage) bool {
	if !isString(raw) {
		return false
	}
	if string(raw) == `"2.0"` {
		return true
	}
	var s string // escaped spellings such as "2\u002e0"
	return json.Unmarshal(raw, &s) == nil && s == "2.0"
}

func isString(raw json.RawMessage) bool     { return len(raw) > 0 && raw[0] == '"' }
func isStructured(raw json.RawMessage) bool { return len(raw) > 0 && (raw[0] == '{' || raw[0] == '[') }
func isDigit(c byte) bool                   { return '0' <= c && c <= '9' }

func firstByte(b []byte) byte {
	for _, c := range b {
		if !isSpace(c) {
			return c
		}
	}
	return 0
}

// isSpace reports JSON's insignificant whitespace plus \v and \f, which the framer also trims.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}
