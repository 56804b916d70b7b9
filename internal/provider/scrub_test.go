package provider

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// plainKey matches none of the recognised key shapes: only knowing it keeps it out of errors.
const plainKey = "zc0Q7fLm2Xv9Rt4Kp8Wz3Nd6Hs1Bc5Jy0GeTuVw48"

// leaks returns the first run of at least n bytes of secret found in s, or "".
func leaks(s, secret string, n int) string {
	for i := 0; i+n <= len(secret); i++ {
		if strings.Contains(s, secret[i:i+n]) {
			return secret[i : i+n]
		}
	}
	return ""
}

// The configured key straddles byte maxErrorBody of the error body: truncating before scrubbing used to keep
// its first bytes.
func TestErrorBodyKeyStraddlingTruncation(t *testing.T) {
	t.Parallel()
	for _, fc := range httpFamilies {
		for _, before := range []int{6, 12, 28, len(plainKey) - 1} {
			body := strings.Repeat("x", maxErrorBody-before) + plainKey + " was rejected"
			srv := newFakeBackend(t, status(401, body))
			p := fc.provider(t, srv.URL, func(s *Settings) { s.APIKey = plainKey })
			_, err := p.Stream(t.Context(), hi(), nil)
			var he *HTTPError
			if !errors.As(err, &he) || he.Status != 401 {
				t.Fatalf("%s: err = %v, want HTTP 401", fc.family, err)
			}
			if l := leaks(err.Error(), plainKey, 6); l != "" {
				t.Errorf("%s, key at byte %d: error leaks %q of the key: ...%s", fc.family, maxErrorBody-before, l,
					err.Error()[max(0, len(err.Error())-60):])
			}
			if len(he.Body) > maxErrorBody+len(redacted)+len("…") {
				t.Errorf("%s: body of %d bytes, want it cut near %d", fc.family, len(he.Body), maxErrorBody)
			}
		}
	}
}

// The read limit cuts the body inside a copy of the key; scrubbing the earlier copies shrinks the text below
// maxErrorBody, so the cut fragment would survive if the tail were not checked.
func TestErrorBodyKeyCutByReadLimit(t *testing.T) {
	t.Parallel()
	copies := (4*maxErrorBody)/len(plainKey) - 1
	body := strings.Repeat(plainKey, copies)
	body += strings.Repeat("y", 4*maxErrorBody-len(body)-20) + plainKey
	srv := newFakeBackend(t, status(500, body))
	p := httpFamilies[0].provider(t, srv.URL, func(s *Settings) { s.APIKey = plainKey; s.MaxRetries = -1 })
	_, err := p.Stream(t.Context(), hi(), nil)
	var he *HTTPError
	if !errors.As(err, &he) {
		t.Fatalf("err = %v, want *HTTPError", err)
	}
	if l := leaks(err.Error(), plainKey, 6); l != "" {
		t.Errorf("error leaks %q of the key: ...%s", l, err.Error()[max(0, len(err.Error())-60):])
	}
	if !strings.HasSuffix(he.Body, "…") {
		t.Errorf("a body cut by the read limit should say so: ...%s", he.Body[max(0, len(he.Body)-40):])
	}
}

func TestScrubRecognisableKeys(t *testing.T) {
	t.Parallel()
	b := newHTTPBase(Settings{APIKey: plainKey, Alias: "t"}, "openai", DefaultOpenAIURI)
	for _, tc := range []struct{ in, want string }{
		{"Incorrect API key provided: sk-proj-Ab12Cd34Ef56Gh78.", "Incorrect API key provided: [redacted]."},
		{"key sk-ant-api03-AAAAbbbbCCCC-dd_ee rejected", "key [redacted] rejected"},
		{"legacy sk-0123456789abcdefABCDEF", "legacy [redacted]"},
		{"masked sk-abcd************wxyz", "masked [redacted]"},
		{"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig", "Authorization: Bearer [redacted]"},
		{"bearer    abcdefgh12345678", "bearer    [redacted]"},
		{`{"api_key": "0123456789abcdefXYZ0"}`, `{"api_key": "[redacted]"}`},
		{"GET /v1/models?key=AIzaSyA1234567890abcdefghijklmnopqrstu&alt=sse", "GET /v1/models?key=[redacted]&alt=sse"},
		{"x-api-key: abcdefghijklmnop0123", "x-api-key: [redacted]"},
		{"access_token=ya29.a0AfB_byC1234567890", "access_token=[redacted]"},
		{"groq gsk_abcdefghijklmnop0123 bad", "groq [redacted] bad"},
		{"configured " + plainKey + "!", "configured [redacted]!"},
		// Ordinary text stays readable.
		{"Invalid token: expected a string", "Invalid token: expected a string"},
		{"the task-manager-service failed", "the task-manager-service failed"},
		{"max_tokens=4096 is too large", "max_tokens=4096 is too large"},
		{"model gpt-4o-mini not found; bearer of bad news", "model gpt-4o-mini not found; bearer of bad news"},
		{"primary key: user_id", "primary key: user_id"},
	} {
		if got := b.scrub(tc.in); got != tc.want {
			t.Errorf("scrub(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// Every run of minFragment or more bytes of a configured key is removed wherever it is: its start, its end, any
// inner run, two runs side by side, and a run split by the error body's cut. Seven bytes are not a fragment.
func TestScrubKeyFragments(t *testing.T) {
	t.Parallel()
	b := newHTTPBase(Settings{APIKey: plainKey, Alias: "t", ExtraHeaders: map[string]string{"X-Org": "org-0123456789abcdef"}},
		"openai", DefaultOpenAIURI)
	k := plainKey
	for _, tc := range []struct{ name, in, want string }{
		{"prefix of 10", "invalid key " + k[:10] + "... rejected", "invalid key [redacted]... rejected"},
		{"prefix of 8", "key " + k[:8] + ",", "key [redacted],"},
		{"suffix", "key ..." + k[len(k)-9:] + " rejected", "key ...[redacted] rejected"},
		{"inner run of 35", "got '" + k[3:38] + "'", "got '[redacted]'"},
		{"inner run of 8", "got " + k[20:28] + ".", "got [redacted]."},
		{"two runs", k[:12] + k[20:30], "[redacted]"},
		{"header fragment", "org " + "org-0123456789"[2:] + " unknown", "org [redacted] unknown"},
		{"seven bytes", "got " + k[5:12] + ".", "got " + k[5:12] + "."},
		{"ordinary text", "Incorrect API key provided.", "Incorrect API key provided."},
	} {
		if got := b.scrub(tc.in); got != tc.want {
			t.Errorf("%s: scrub(%q)\n got %q\nwant %q", tc.name, tc.in, got, tc.want)
		}
	}
	// The cut at maxErrorBody lands inside an echoed inner run of the key.
	for _, before := range []int{3, 8, 9, 20} {
		raw := strings.Repeat("z", maxErrorBody-before) + k[4:36] + " was rejected"
		if got := b.errorBody([]byte(raw), true); leaks(got, k, minFragment) != "" {
			t.Errorf("cut %d bytes into an inner run: %q survives", before, leaks(got, k, minFragment))
		}
	}
}

func TestErrorBodyCutNeverEndsInKeyPrefix(t *testing.T) {
	t.Parallel()
	b := newHTTPBase(Settings{APIKey: plainKey, Alias: "t"}, "openai", DefaultOpenAIURI)
	for n := 4; n < len(plainKey); n++ {
		// A partial key already in the body, landing exactly at the truncation point.
		raw := strings.Repeat("z", maxErrorBody-n) + plainKey[:n] + strings.Repeat("q", 100)
		got := b.errorBody([]byte(raw), true)
		if l := leaks(got, plainKey, 4); l != "" {
			t.Errorf("prefix of %d bytes at the cut: %q survives", n, l)
		}
	}
}

func FuzzScrub(f *testing.F) {
	f.Add(plainKey, "org-header-value", "invalid key "+plainKey, true)
	f.Add("sk-test", "", strings.Repeat("a", maxErrorBody-3)+"sk-test", false)
	f.Add("ted]X", "hdr", "ted]XX[redacted]", true)
	f.Add("e", "", "Bearer abcdefgh12345678 and sk-proj-1234567890", false)
	f.Add("abcd", "abcdabcd", strings.Repeat("abcdab", 400), false)
	f.Add(plainKey, "", "prefix "+plainKey[:10]+" inner "+plainKey[3:38]+" end "+plainKey[len(plainKey)-8:], true)
	f.Add("ted]abcdefgh", "[redacted]", "[redac"+"ted]abcdefgh", true)
	f.Fuzz(func(t *testing.T, key, header, text string, whole bool) {
		b := newHTTPBase(Settings{APIKey: key, Alias: "f", ExtraHeaders: map[string]string{"X-H": header}}, "openai", DefaultOpenAIURI)
		secrets := []string{}
		if key != "" {
			secrets = append(secrets, key)
		}
		if len(header) >= minSecretLength {
			secrets = append(secrets, header)
		}
		scrubbed := b.scrub(text)
		if all := newScrubber(secrets).scrubWith(text, false); newScrubber(secrets).scrub(text) != all {
			t.Fatalf("scrub with the shape hints = %q, every regexp run = %q", newScrubber(secrets).scrub(text), all)
		}
		body := b.errorBody([]byte(text), whole)
		for _, s := range secrets {
			if strings.Contains(scrubbed, s) {
				t.Fatalf("scrub output %q contains secret %q", scrubbed, s)
			}
			if strings.Contains(body, s) {
				t.Fatalf("errorBody output %q contains secret %q", body, s)
			}
			// No run of minFragment bytes of a secret survives, in the scrubbed text or the cut error body.
			if l := leaks(scrubbed, s, minFragment); l != "" {
				t.Fatalf("scrub output %q keeps %q of secret %q", scrubbed, l, s)
			}
			if l := leaks(body, s, minFragment); l != "" {
				t.Fatalf("errorBody output %q keeps %q of secret %q", body, l, s)
			}
		}
		if len(body) > maxErrorBody+len(redacted)+len("…") {
			t.Fatalf("errorBody output of %d bytes", len(body))
		}
		if utf8.ValidString(text) && utf8.ValidString(key) && utf8.ValidString(header) && !utf8.ValidString(body) {
			t.Fatalf("errorBody broke UTF-8: %q", body)
		}
		// A cut never ends in the start of a realistic key.
		if strings.HasSuffix(body, "…") && len(key) > 4 && strings.Trim(key, tokenChars) == "" {
			kept := strings.TrimSuffix(body, "…")
			for n := 4; n < len(key); n++ {
				if strings.HasSuffix(kept, key[:n]) {
					t.Fatalf("errorBody %q ends in %q, a prefix of the key", body, key[:n])
				}
			}
		}
	})
}

const tokenChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"

// The key-shape hints skip only regexps that cannot match: scrub gives what running every regexp gives, for the
// recognisable keys, ordinary text, mixed case, and letters that case folding maps onto ASCII.
func TestScrubHintsChangeNothing(t *testing.T) {
	t.Parallel()
	sc := newScrubber([]string{plainKey})
	for _, text := range []string{
		"", "turn started", "rpc_3f2a9c1e-77aa-4b1e-9d4c-0a1b2c3d4e5f", "tool call shell",
		"Incorrect API key provided: sk-proj-Ab12Cd34Ef56Gh78.", "AUTHORIZATION: BEARER eyJhbGciOiJIUzI1NiJ9.e30.sig",
		`{"API_KEY": "0123456789abcdefXYZ0"}`, "Access_Token=ya29.a0AfB_byC1234567890", "ghp_abcdefghijklmnop0123",
		"hf_abcdefghijklmnopqrst", "configured " + plainKey, "AIzaSyA1234567890abcdefghijklmnopqrstu",
		"toKen=abcdefghijklmnop0123",  // Kelvin sign: (?i) folds it onto k
		"ſecret=abcdefghijklmnop0123", // long s: (?i) folds it onto s
		"PASSWORD: abcdefghijklmnopqrstuvwxyz", "primary key: user_id", "sk-abcd************wxyz",
	} {
		if got, want := sc.scrub(text), sc.scrubWith(text, false); got != want {
			t.Errorf("scrub(%q) = %q, every regexp run gives %q", text, got, want)
		}
	}
	if got := sc.scrub("toKen=abcdefghijklmnop0123"); strings.Contains(got, "abcdefghijklmnop0123") {
		t.Errorf("a folded keyword kept its value: %q", got)
	}
}

func BenchmarkScrubLogText(b *testing.B) {
	sc := newScrubber([]string{plainKey})
	texts := []string{"turn started", "rpc_3f2a9c1e-77aa-4b1e-9d4c-0a1b2c3d4e5f", "3f2a9c1e-77aa-4b1e-9d4c-0a1b2c3d4e5f", "default"}
	for b.Loop() {
		for _, s := range texts {
			sc.scrub(s)
		}
	}
}

// BenchmarkScrubErrorBody scrubs a 4 KiB provider error body (the read limit) with five configured secrets, as
// a daemon with several providers scrubs its log and trace text.
func BenchmarkScrubErrorBody(b *testing.B) {
	secrets := []string{plainKey, "org-0123456789abcdefghij", "hdr-value-ZYXWVUTSRQ", "sk-live-abcdefghijklmnopqrstuvwxyz", "x7Hq2Lm9Pz4Rt8Wn"}
	sc := newScrubber(secrets)
	body := strings.Repeat(`{"error":{"message":"The model produced an invalid request; see the docs","type":"invalid_request"}} `, 50)[:4*maxErrorBody]
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		sc.scrub(body)
	}
}
