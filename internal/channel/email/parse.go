package email

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// Bounds of one inbound mail.
const (
	MaxFetchBytes = 256 << 10 // the part of a message fetched (headers and the first text part must fit)
	MaxTextBytes  = 32 << 10  // the text handed to the agent
	maxParts      = 32        // MIME parts looked at
	maxDepth      = 4         // nesting of multiparts
)

// Mail is what the adapter reads from one message.
type Mail struct {
	MessageID string // without the angle brackets; "" when the message has none
	From      string // the bare sender address, lower-cased
	Subject   string
	Text      string
	// Auto is set for automatic mail (Auto-Submitted other than "no", a Precedence of bulk/junk/list, or a
	// mailer-daemon bounce): never answered, so two robots cannot loop.
	Auto bool
}

var errNoFrom = errors.New("email: no usable From address")

// Parse reads a raw RFC 5322 message (possibly cut at MaxFetchBytes).
func Parse(raw []byte) (Mail, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return Mail{}, err
	}
	h := msg.Header
	var m Mail
	from, err := mail.ParseAddress(h.Get("From"))
	if err != nil || from.Address == "" {
		return Mail{}, errNoFrom
	}
	m.From = strings.ToLower(from.Address)
	m.MessageID = strings.Trim(strings.TrimSpace(h.Get("Message-Id")), "<>")
	if len(m.MessageID) > 512 || strings.ContainsAny(m.MessageID, "\r\n\x00") {
		m.MessageID = ""
	}
	dec := new(mime.WordDecoder)
	if s, err := dec.DecodeHeader(h.Get("Subject")); err == nil {
		m.Subject = oneLine(s, 300)
	} else {
		m.Subject = oneLine(h.Get("Subject"), 300)
	}
	auto := strings.ToLower(strings.TrimSpace(h.Get("Auto-Submitted")))
	prec := strings.ToLower(strings.TrimSpace(h.Get("Precedence")))
	local, _, _ := strings.Cut(m.From, "@")
	m.Auto = auto != "" && auto != "no" || prec == "bulk" || prec == "junk" || prec == "list" ||
		local == "mailer-daemon" || local == "postmaster" || h.Get("X-Autoreply") != ""
	m.Text = clipText(textOf(h.Get("Content-Type"), h.Get("Content-Transfer-Encoding"), msg.Body, 0))
	return m, nil
}

// oneLine makes a header value safe to write back into a header (no CR/LF: no header injection).
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
	if len(s) > n {
		s = s[:n]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	return s
}

func clipText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) > MaxTextBytes {
		s = s[:MaxTextBytes]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	return strings.TrimSpace(s)
}

// textOf finds the text of a body: text/plain first, else text/html with the tags dropped.
func textOf(ctype, cte string, body io.Reader, depth int) string {
	mt, params, err := mime.ParseMediaType(ctype)
	if err != nil || ctype == "" {
		mt = "text/plain"
	}
	switch {
	case strings.HasPrefix(mt, "multipart/") && depth < maxDepth:
		r := multipart.NewReader(body, params["boundary"])
		var html string
		for i := 0; i < maxParts; i++ {
			p, err := r.NextPart()
			if err != nil {
				break
			}
			t := textOf(p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p, depth+1)
			pt, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
			if t != "" && (pt == "" || pt == "text/plain" || strings.HasPrefix(pt, "multipart/")) {
				return t
			}
			if t != "" && html == "" {
				html = t
			}
		}
		return html
	case mt == "text/plain" || mt == "text/html":
		b, _ := io.ReadAll(io.LimitReader(decode(cte, body), MaxTextBytes*2))
		if mt == "text/html" {
			return stripTags(string(b))
		}
		return string(b)
	}
	return ""
}

func decode(cte string, r io.Reader) io.Reader {
	switch strings.ToLower(strings.TrimSpace(cte)) {
	case "base64":
		return base64.NewDecoder(base64.StdEncoding, &lineless{r: r})
	case "quoted-printable":
		return quotedprintable.NewReader(r)
	}
	return r
}

// lineless drops CR and LF so base64 decodes across lines.
type lineless struct{ r io.Reader }

func (l *lineless) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	j := 0
	for _, c := range p[:n] {
		if c != '\r' && c != '\n' {
			p[j] = c
			j++
		}
	}
	if j == 0 && err == nil && n > 0 {
		return l.Read(p)
	}
	return j, err
}

var tagRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)<[^>]*>`) })

func stripTags(s string) string {
	return strings.NewReplacer("&nbsp;", " ", "&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`).Replace(tagRE().ReplaceAllString(s, " "))
}
