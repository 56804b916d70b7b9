package provider

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

const (
	maxErrorBody    = 1024             // bytes of an error body kept in HTTPError.Body
	maxLineBytes    = 16 << 20         // longest SSE/NDJSON line accepted
	maxRetryAfter   = 60 * time.Second // a longer Retry-After is reported instead of waited for
	redacted        = "[redacted]"
	minSecretLength = 4 // shorter header values are not secrets worth scrubbing (and would mangle messages)
)

// httpBase holds what the HTTP families share: settings, the alias, retries and secret scrubbing.
type httpBase struct {
	s        Settings
	alias    string
	scrubber *scrubber
}

func newHTTPBase(s Settings, family, defaultURI string) httpBase {
	if strings.TrimSpace(s.URI) == "" {
		s.URI = defaultURI
	}
	s.URI = strings.TrimRight(strings.TrimSpace(s.URI), "/")
	var secrets []string
	if len(s.APIKey) > 0 {
		secrets = append(secrets, s.APIKey)
	}
	for _, v := range s.ExtraHeaders {
		if len(v) >= minSecretLength {
			secrets = append(secrets, v)
		}
	}
	return httpBase{s: s, alias: family + "." + s.Alias, scrubber: newScrubber(secrets)}
}

// Alias returns "<family>.<alias>".
func (b *httpBase) Alias() string { return b.alias }

// scrub removes the configured secrets and anything shaped like a key from s.
func (b *httpBase) scrub(s string) string { return b.scrubber.scrub(s) }

// providerError wraps a cause with a message that names the alias and is scrubbed of secrets, while errors.Is
// and errors.As still reach the cause.
type providerError struct {
	msg   string
	cause error
}

func (e *providerError) Error() string { return e.msg }
func (e *providerError) Unwrap() error { return e.cause }

// fail wraps err for the caller: context errors become "provider: <alias>: <ctx err>", everything else keeps its
// chain but has a scrubbed message.
func (b *httpBase) fail(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("provider: %s: %w", b.alias, cerr)
	}
	var he *HTTPError
	if errors.As(err, &he) {
		return he
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "provider: "+b.alias) {
		msg = "provider: " + b.alias + ": " + strings.TrimPrefix(msg, "provider: ")
	}
	return &providerError{msg: b.scrub(msg), cause: err}
}

// transientError marks a failure that may be retried when nothing was emitted yet (connection errors, a stream
// cut short).
type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

func retryable(err error) (bool, time.Duration) {
	var he *HTTPError
	if errors.As(err, &he) {
		return he.Temporary() && he.retryAfter <= maxRetryAfter, he.retryAfter
	}
	var te *transientError
	if !errors.As(err, &te) {
		return false, 0
	}
	if errors.Is(err, ErrIdleTimeout) {
		return false, 0 // a silent backend already used the budget a retry would need
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false, 0 // the whole-request timeout already elapsed; do not multiply it
	}
	// A name that does not resolve, or a network with no route to the host, will not heal in a second; a
	// refused connection (a backend restarting) might, and is retried within the budget.
	var dns *net.DNSError
	if errors.As(err, &dns) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) {
		return false, 0
	}
	return true, 0
}

// attemptFunc performs one request and parses its stream, emitting events as they arrive; headerWait bounds
// the wait for the response headers. On error it returns whatever it assembled so far.
type attemptFunc func(ctx context.Context, headerWait time.Duration, emit func(Event)) (Result, error)

// streamPOST posts body to url and hands the streamed response to parse, with run's retry policy: the common
// shape of every HTTP family's Stream.
func (b *httpBase) streamPOST(ctx context.Context, emit func(Event), url string, body []byte, headers map[string]string,
	parse func(r io.Reader, emit func(Event)) (Result, error)) (Result, error) {
	return b.run(ctx, emit, func(ctx context.Context, headerWait time.Duration, emit func(Event)) (Result, error) {
		resp, err := b.post(ctx, headerWait, url, body, headers)
		if err != nil {
			return Result{}, err
		}
		defer resp.Body.Close()
		return parse(resp.Body, emit)
	})
}

// run calls attempt, retrying with exponential backoff (or the server's Retry-After) on 429/5xx and transient
// transport failures, but only while no event has been emitted, since a retry would repeat what the caller
// already saw. Every attempt and every backoff must fit in one budget of IdleTimeout (timeout_secs) counted
// from the first attempt: a retry that would start past it is not made.
func (b *httpBase) run(ctx context.Context, emit func(Event), attempt attemptFunc) (Result, error) {
	if emit == nil {
		emit = func(Event) {}
	}
	emitted := false
	track := func(ev Event) {
		emitted = true
		emit(ev)
	}
	deadline := b.s.Now().Add(b.s.IdleTimeout)
	delay := b.s.RetryBase
	for try := 1; ; try++ {
		wait := min(b.s.IdleTimeout, deadline.Sub(b.s.Now()))
		res, err := attempt(ctx, wait, track)
		if err == nil {
			return res, nil
		}
		if ctx.Err() != nil || emitted {
			return res, b.fail(ctx, err)
		}
		ok, after := retryable(err)
		if !ok {
			return res, b.fail(ctx, err)
		}
		if try > b.s.MaxRetries {
			return res, b.gaveUp(ctx, err, try, "")
		}
		pause := delay
		if after > 0 {
			pause = after
		}
		delay *= 2
		budgetSpent := fmt.Sprintf("; another retry would not fit in timeout_secs (%s for all attempts)", b.s.IdleTimeout)
		if !b.s.Now().Add(pause).Before(deadline) {
			return res, b.gaveUp(ctx, err, try, budgetSpent)
		}
		if serr := b.s.Sleep(ctx, pause); serr != nil {
			return res, b.fail(ctx, serr)
		}
		if !b.s.Now().Before(deadline) { // the sleep overran what was left
			return res, b.gaveUp(ctx, err, try, budgetSpent)
		}
	}
}

// gaveUp reports err as the last of attempts failed attempts, with why no more were made.
func (b *httpBase) gaveUp(ctx context.Context, err error, attempts int, why string) error {
	e := b.fail(ctx, err)
	if attempts < 2 && why == "" {
		return e
	}
	noun := "attempts"
	if attempts == 1 {
		noun = "attempt"
	}
	return &providerError{msg: fmt.Sprintf("%s (gave up after %d %s%s)", e.Error(), attempts, noun, why), cause: e}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// post sends body as JSON to url with the family's headers plus ExtraHeaders. A non-2xx status becomes an
// *HTTPError (body truncated and scrubbed); the caller closes the returned body.
//
// The request is cancelled when the backend stays silent: for headerWait before the headers, or for IdleTimeout
// between two reads of the body (the returned body reports ErrIdleTimeout then).
func (b *httpBase) post(ctx context.Context, headerWait time.Duration, url string, body []byte, headers map[string]string) (*http.Response, error) {
	rctx, cancel := context.WithCancelCause(ctx)
	idle := time.AfterFunc(headerWait, func() { cancel(ErrIdleTimeout) })
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		idle.Stop()
		cancel(nil)
		return nil, fmt.Errorf("provider: %s: build request: %w", b.alias, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "zeroclaw")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	for k, v := range b.s.ExtraHeaders {
		req.Header.Set(k, v)
	}
	resp, err := b.s.Client.Do(req)
	if err != nil {
		idle.Stop()
		if errors.Is(context.Cause(rctx), ErrIdleTimeout) && ctx.Err() == nil {
			err = fmt.Errorf("%w (%s, waiting for the response)", ErrIdleTimeout, headerWait)
		}
		cancel(nil)
		return nil, &transientError{fmt.Errorf("provider: %s: send: %w", b.alias, err)}
	}
	resp.Body = &idleBody{rc: resp.Body, ctx: rctx, cancel: cancel, timer: idle, d: b.s.IdleTimeout}
	idle.Reset(b.s.IdleTimeout)
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4*maxErrorBody+1))
	whole := len(raw) <= 4*maxErrorBody
	if !whole {
		raw = raw[:4*maxErrorBody]
	}
	return nil, &HTTPError{
		Alias:      b.alias,
		Status:     resp.StatusCode,
		Body:       b.errorBody(raw, whole),
		retryAfter: parseRetryAfter(resp.Header.Get("Retry-After")),
	}
}

// errorBody renders an error response body for HTTPError: scrubbed first, then cut to maxErrorBody bytes, so
// that no cut can split a secret before it is recognised. whole is false when the read limit already cut raw,
// possibly inside a secret; every cut end is cleared of a secret's start and marked with "…".
func (b *httpBase) errorBody(raw []byte, whole bool) string {
	s := strings.TrimSpace(b.scrubber.scrub(string(raw)))
	if !whole {
		s = b.scrubber.cutTail(s)
	}
	if len(s) > maxErrorBody {
		s, whole = s[:runeCut(s, maxErrorBody)], false
		s = b.scrubber.cutTail(s)
	}
	if !whole {
		s += "…"
	}
	if b.scrubber.holdsSecret(s) { // a secret that is a piece of the marker
		s = b.scrubber.scrub(s)
	}
	return s
}

// idleBody re-arms the idle timer on every read and reports ErrIdleTimeout when the timer cancelled the request.
type idleBody struct {
	rc     io.ReadCloser
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
	d      time.Duration
}

func (r *idleBody) Read(p []byte) (int, error) {
	n, err := r.rc.Read(p)
	if n > 0 {
		r.timer.Reset(r.d)
	}
	if err != nil && errors.Is(context.Cause(r.ctx), ErrIdleTimeout) {
		err = fmt.Errorf("%w (%s between two chunks)", ErrIdleTimeout, r.d)
	}
	return n, err
}

func (r *idleBody) Close() error {
	r.timer.Stop()
	err := r.rc.Close()
	r.cancel(nil)
	return err
}

// readErr classifies an error met while reading a response body.
func (b *httpBase) readErr(err error) error {
	if errors.Is(err, errLineTooLong) {
		return fmt.Errorf("provider: %s: %w: %w", b.alias, ErrBadResponse, err)
	}
	return &transientError{fmt.Errorf("provider: %s: read stream: %w", b.alias, err)}
}

// incomplete reports a stream that ended without the family's end marker.
func (b *httpBase) incomplete() error {
	return &transientError{fmt.Errorf("provider: %s: %w", b.alias, ErrIncomplete)}
}

func (b *httpBase) badChunk(err error) error {
	return fmt.Errorf("provider: %s: %w: %w", b.alias, ErrBadResponse, err)
}

func parseRetryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil {
		if n < 0 {
			return 0
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// runeCut is the largest rune boundary of s at or below n (n < len(s)).
func runeCut(s string, n int) int {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

var errLineTooLong = errors.New("line too long")

// lineReader reads lines of at most max bytes ended by "\r\n", "\n" or a lone "\r", as text/event-stream allows.
type lineReader struct {
	r       *bufio.Reader
	buf     []byte
	max     int
	pending [][]byte // lines ended by a lone '\r' still to return, from the last chunk read
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 32<<10), max: maxLineBytes}
}

// readLine returns the next line without its terminator; the slice is valid until the next call. The last line
// may lack a terminator; io.EOF is returned only when no bytes remain.
func (l *lineReader) readLine() ([]byte, error) {
	if len(l.pending) > 0 {
		line := l.pending[0]
		l.pending = l.pending[1:]
		return line, nil
	}
	line, err := l.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		l.buf = append(l.buf[:0], line...)
		for err == bufio.ErrBufferFull {
			if len(l.buf) > l.max {
				return nil, errLineTooLong
			}
			line, err = l.r.ReadSlice('\n')
			l.buf = append(l.buf, line...)
		}
		line = l.buf
	}
	if err != nil && (err != io.EOF || len(line) == 0) {
		return nil, err
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r")) // of "\r\n", or a lone '\r' ending the last line of the input
	if bytes.IndexByte(line, '\r') < 0 {
		return line, nil
	}
	// Lone '\r's end lines too; the slices stay valid until the next read, which waits for pending to empty.
	parts := bytes.Split(line, []byte{'\r'})
	l.pending = append(l.pending[:0], parts[1:]...)
	return parts[0], nil
}

// sseReader decodes a text/event-stream body into (event, data) pairs.
type sseReader struct {
	lines *lineReader
	event string
	data  []byte
}

func newSSEReader(r io.Reader) *sseReader { return &sseReader{lines: newLineReader(r)} }

// next returns the next dispatched event. data is valid until the next call. It returns io.EOF at the end.
func (s *sseReader) next() (event string, data []byte, err error) {
	s.event = ""
	s.data = s.data[:0]
	hasData := false
	for {
		line, err := s.lines.readLine()
		if err != nil {
			if err == io.EOF && hasData {
				return s.event, s.data, nil
			}
			return "", nil, err
		}
		if len(line) == 0 {
			if hasData {
				return s.event, s.data, nil
			}
			s.event = ""
			continue
		}
		if line[0] == ':' {
			continue // comment / keep-alive
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "event":
			s.event = string(value)
		case "data":
			if len(s.data)+1+len(value) > s.lines.max { // an event that never ends is bounded like a line
				return "", nil, errLineTooLong
			}
			if hasData {
				s.data = append(s.data, '\n')
			}
			s.data = append(s.data, value...)
			hasData = true
		}
	}
}

// eventDecoder decodes the JSON of one SSE event at a time like json.Unmarshal, but keeps one json.Decoder (its
// scanner and decode state) across the events of a stream instead of building them for each event. Anything
// but one whole value, possibly followed by whitespace, is decoded again by json.Unmarshal into a zeroed value,
// so an invalid event gets exactly Unmarshal's error.
type eventDecoder struct {
	src  bytes.Reader
	dec  *json.Decoder
	base int64 // dec's InputOffset when the event began (it counts from the decoder's first event)
}

// decode decodes data into v, which must point to a zero value.
func (d *eventDecoder) decode(data []byte, v any) error {
	d.src.Reset(data)
	if d.dec == nil {
		d.dec, d.base = json.NewDecoder(&d.src), 0
	}
	err := d.dec.Decode(v)
	if err == nil {
		end := d.dec.InputOffset()
		off := end - d.base
		d.base = end
		if off == int64(len(data)) {
			return nil
		} else if off < int64(len(data)) && onlySpace(data[off:]) {
			d.dec = nil // trailing whitespace, read ahead or not: the next event starts with a fresh decoder
			return nil
		}
	}
	d.dec = nil // a failed Decoder keeps its error, and read-ahead bytes must not reach the next event
	reflect.ValueOf(v).Elem().SetZero()
	return json.Unmarshal(data, v)
}

// onlySpace reports whether b is JSON whitespace only.
func onlySpace(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}
