package email

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseMultipartAndEncodings(t *testing.T) {
	raw := "From: \"A\" <Alice@Example.com>\r\nSubject: =?utf-8?q?caf=C3=A9?=\r\nMessage-ID: <x@y>\r\n" +
		"Content-Type: multipart/alternative; boundary=b\r\n\r\n--b\r\nContent-Type: text/html\r\n\r\n<p>html</p>\r\n" +
		"--b\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\naGVsbG8g\r\nd29ybGQ=\r\n--b--\r\n"
	m, err := Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if m.From != "alice@example.com" || m.Subject != "café" || m.MessageID != "x@y" || m.Text != "hello world" || m.Auto {
		t.Fatalf("%+v", m)
	}
	if _, err := Parse([]byte("Subject: no from\r\n\r\nx")); err == nil {
		t.Fatal("a mail without From was accepted")
	}
	m, _ = Parse([]byte("From: a@b\r\nSubject: evil\r\n Bcc: victim@x\r\n\r\nbody"))
	if strings.ContainsAny(m.Subject, "\r\n") {
		t.Fatalf("subject %q keeps a line break", m.Subject)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("From: a@b.c\r\nMessage-ID: <1@b>\r\nSubject: hi\r\n\r\nbody"))
	f.Add([]byte("From: a@b.c\r\nContent-Type: multipart/mixed; boundary=x\r\n\r\n--x\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nh=C3=A9\r\n--x--"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := Parse(raw)
		if err != nil {
			return
		}
		if strings.ContainsAny(m.Subject, "\r\n") || strings.ContainsAny(m.MessageID, "\r\n") || m.From == "" {
			t.Fatalf("unsafe header values: %+v", m)
		}
		if len(m.Text) > MaxTextBytes || !utf8.ValidString(m.Text) || !utf8.ValidString(m.Subject) {
			t.Fatalf("text of %d bytes, valid %v", len(m.Text), utf8.ValidString(m.Text))
		}
	})
}
