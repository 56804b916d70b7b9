package secrets

import (
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// newBox returns a Box whose key path lives in a fresh temp dir.
func newBox(t *testing.T) (*Box, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), ".secret_key")
	return New(path), path
}

// writeKey installs a known key file and returns the raw key.
func writeKey(t *testing.T, path, content string) []byte {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	key, err := hex.DecodeString(strings.TrimSpace(content))
	if err != nil {
		t.Fatal(err)
	}
	return key
}

const fixedKeyHex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

// legacyEncode produces the legacy "enc:" form: plaintext XOR key (cyclic), hex-encoded.
func legacyEncode(key []byte, plain string) string {
	out := []byte(plain)
	for i := range out {
		out[i] ^= key[i%len(key)]
	}
	return "enc:" + hex.EncodeToString(out)
}

func mustEncrypt(t *testing.T, b *Box, plain string) string {
	t.Helper()
	enc, err := b.Encrypt(plain)
	if err != nil {
		t.Fatalf("Encrypt: %v", err)
	}
	return enc
}

func assertNoFile(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("key file %s exists (err=%v), want none", path, err)
	}
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	b, _ := newBox(t)
	for _, plain := range []string{"sk-abc123", "x", "päss wörd ✓", strings.Repeat("long", 1000), "enc2 without colon"} {
		enc := mustEncrypt(t, b, plain)
		if !strings.HasPrefix(enc, "enc2:") || !IsEncrypted(enc) || IsLegacy(enc) {
			t.Fatalf("Encrypt(%q) = %q, want enc2: value", plain, enc)
		}
		payload := strings.TrimPrefix(enc, "enc2:")
		if payload != strings.ToLower(payload) {
			t.Fatalf("payload not lowercase hex: %q", payload)
		}
		if got, want := len(payload), 2*(12+len(plain)+16); got != want {
			t.Fatalf("payload hex len = %d, want %d (nonce||ct||tag)", got, want)
		}
		if strings.Contains(enc, plain) {
			t.Fatalf("ciphertext contains plaintext")
		}
		got, err := b.Decrypt(enc)
		if err != nil || got != plain {
			t.Fatalf("Decrypt = %q, %v; want %q", got, err, plain)
		}
	}
}

func TestDecryptWithFreshBoxReadsSavedKey(t *testing.T) {
	t.Parallel()
	b, path := newBox(t)
	enc := mustEncrypt(t, b, "token-1")
	got, err := New(path).Decrypt(enc)
	if err != nil || got != "token-1" {
		t.Fatalf("fresh Box Decrypt = %q, %v", got, err)
	}
}

func TestEncryptionsDiffer(t *testing.T) {
	t.Parallel()
	b, _ := newBox(t)
	a, c := mustEncrypt(t, b, "same"), mustEncrypt(t, b, "same")
	if a == c {
		t.Fatalf("two encryptions of the same value are equal: %q", a)
	}
	if a[5:29] == c[5:29] {
		t.Fatalf("nonce reused: %q", a[5:29])
	}
}

func TestPassThroughValues(t *testing.T) {
	t.Parallel()
	b, path := newBox(t)
	for _, v := range []string{"", "op://vault/item/field"} {
		if got := mustEncrypt(t, b, v); got != v {
			t.Fatalf("Encrypt(%q) = %q, want unchanged", v, got)
		}
		if got, err := b.Decrypt(v); err != nil || got != v {
			t.Fatalf("Decrypt(%q) = %q, %v, want unchanged", v, got, err)
		}
	}
	// Plain values decrypt to themselves; none of this needs a key.
	if got, err := b.Decrypt("plain-value"); err != nil || got != "plain-value" {
		t.Fatalf("Decrypt(plain) = %q, %v", got, err)
	}
	assertNoFile(t, path)
	if b.KeyExists() {
		t.Fatal("KeyExists = true before any key was needed")
	}
}

func TestEnc2NotReencrypted(t *testing.T) {
	t.Parallel()
	b, _ := newBox(t)
	enc := mustEncrypt(t, b, "secret")
	if again := mustEncrypt(t, b, enc); again != enc {
		t.Fatalf("re-Encrypt changed value: %q -> %q", enc, again)
	}
	// Even a foreign/corrupt enc2: value is left alone rather than double-wrapped.
	if got := mustEncrypt(t, b, "enc2:zz"); got != "enc2:zz" {
		t.Fatalf("Encrypt(enc2:zz) = %q", got)
	}
}

func TestLegacy(t *testing.T) {
	t.Parallel()
	b, path := newBox(t)
	key := writeKey(t, path, fixedKeyHex)
	// Longer than the key, to exercise the cyclic XOR.
	plain := "legacy-secret-value-that-is-longer-than-thirty-two-bytes"
	legacy := legacyEncode(key, plain)
	if !IsLegacy(legacy) || !IsEncrypted(legacy) {
		t.Fatalf("IsLegacy/IsEncrypted false for %q", legacy)
	}
	got, err := b.Decrypt(legacy)
	if err != nil || got != plain {
		t.Fatalf("Decrypt(legacy) = %q, %v", got, err)
	}
	up := mustEncrypt(t, b, legacy)
	if !strings.HasPrefix(up, "enc2:") {
		t.Fatalf("Encrypt(legacy) = %q, want enc2:", up)
	}
	if got, err := b.Decrypt(up); err != nil || got != plain {
		t.Fatalf("Decrypt(upgraded) = %q, %v", got, err)
	}
	if got := mustEncrypt(t, b, "enc:"); got != "" {
		t.Fatalf("Encrypt(empty legacy) = %q, want \"\"", got)
	}
	if _, err := b.Decrypt("enc:nothex"); !errors.Is(err, ErrDecrypt) {
		t.Fatalf("Decrypt(bad legacy hex) err = %v, want ErrDecrypt", err)
	}
}

func TestMissingKey(t *testing.T) {
	t.Parallel()
	src, _ := newBox(t)
	enc := mustEncrypt(t, src, "secret")
	b, path := newBox(t)
	legacy := legacyEncode(make([]byte, 32), "x")
	for _, v := range []string{enc, legacy, "enc2:"} {
		if _, err := b.Decrypt(v); !errors.Is(err, ErrNoKey) {
			t.Fatalf("Decrypt(%q) err = %v, want ErrNoKey", v, err)
		}
	}
	// Upgrading a legacy value needs its key: never mint a new one for it.
	if _, err := b.Encrypt(legacy); !errors.Is(err, ErrNoKey) {
		t.Fatalf("Encrypt(legacy) err = %v, want ErrNoKey", err)
	}
	assertNoFile(t, path)
	if b.KeyExists() {
		t.Fatal("KeyExists = true")
	}
	if !strings.Contains(ErrNoKey.Error(), "restore it from backup") {
		t.Fatalf("ErrNoKey gives no hint: %q", ErrNoKey)
	}
}

func TestWrongKey(t *testing.T) {
	t.Parallel()
	a, _ := newBox(t)
	enc := mustEncrypt(t, a, "secret")
	b, path := newBox(t)
	writeKey(t, path, fixedKeyHex)
	got, err := b.Decrypt(enc)
	if !errors.Is(err, ErrDecrypt) || got != "" {
		t.Fatalf("Decrypt with wrong key = %q, %v; want \"\", ErrDecrypt", got, err)
	}
}

func TestTampered(t *testing.T) {
	t.Parallel()
	b, _ := newBox(t)
	enc := mustEncrypt(t, b, "secret")
	flip := func(i int) string {
		raw, _ := hex.DecodeString(enc[5:])
		raw[i] ^= 0x01
		return "enc2:" + hex.EncodeToString(raw)
	}
	cases := map[string]string{
		"nonce":     flip(0),
		"body":      flip(12),
		"tag":       flip(len(enc[5:])/2 - 1),
		"truncated": enc[:len(enc)-2],
		"short":     "enc2:" + strings.Repeat("00", 27),
		"odd hex":   enc[:len(enc)-1],
		"non-hex":   "enc2:" + strings.Repeat("zz", 40),
		"empty":     "enc2:",
		"extended":  enc + "00",
	}
	for name, v := range cases {
		got, err := b.Decrypt(v)
		if !errors.Is(err, ErrDecrypt) || got != "" {
			t.Errorf("%s: Decrypt = %q, %v; want ErrDecrypt", name, got, err)
		}
	}
}

func TestErrorsLeakNothing(t *testing.T) {
	t.Parallel()
	b, path := newBox(t)
	writeKey(t, path, fixedKeyHex)
	// A legacy value encoded with another key decodes to invalid UTF-8 under ours.
	other := make([]byte, 32)
	for i := range other {
		other[i] = 0xff
	}
	_, err := b.Decrypt(legacyEncode(other, "hunter2hunter2"))
	if !errors.Is(err, ErrDecrypt) {
		t.Fatalf("Decrypt(legacy, other key) err = %v, want ErrDecrypt", err)
	}
	writeKey(t, path, fixedKeyHex+"00")
	_, err2 := New(path).Encrypt("hunter2")
	for _, e := range []error{err, err2} {
		if e == nil {
			t.Fatal("want an error")
		}
		msg := e.Error()
		if strings.Contains(msg, "hunter2") || strings.Contains(msg, fixedKeyHex[:16]) {
			t.Fatalf("error leaks secret material: %q", msg)
		}
		if !strings.HasPrefix(msg, "secrets: ") {
			t.Fatalf("error not prefixed with package: %q", msg)
		}
	}
}

func TestKeyFileFormat(t *testing.T) {
	t.Parallel()
	b, path := newBox(t)
	mustEncrypt(t, b, "secret")
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode = %v, want regular 0600", fi.Mode())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 64 {
		t.Fatalf("key file is %d bytes, want 64 (no newline): %q", len(data), data)
	}
	if _, err := hex.DecodeString(string(data)); err != nil || string(data) != strings.ToLower(string(data)) {
		t.Fatalf("key file is not lowercase hex")
	}
	if !b.KeyExists() || !New(path).KeyExists() {
		t.Fatal("KeyExists = false after creation")
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("dir holds %d entries, want only the key (temp file left behind?)", len(entries))
	}
}

func TestKeyFileTrailingNewline(t *testing.T) {
	t.Parallel()
	b, path := newBox(t)
	key := writeKey(t, path, fixedKeyHex+"\n")
	legacy := legacyEncode(key, "value")
	if got, err := b.Decrypt(legacy); err != nil || got != "value" {
		t.Fatalf("Decrypt = %q, %v", got, err)
	}
	enc := mustEncrypt(t, b, "value")
	if got, err := New(path).Decrypt(enc); err != nil || got != "value" {
		t.Fatalf("Decrypt = %q, %v", got, err)
	}
	data, _ := os.ReadFile(path)
	if string(data) != fixedKeyHex+"\n" {
		t.Fatal("existing key file was rewritten")
	}
}

func TestInvalidKeyFile(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"short":   fixedKeyHex[:62],
		"long":    fixedKeyHex + "00",
		"non-hex": strings.Repeat("zz", 32),
		"empty":   "",
		"huge":    strings.Repeat("0", 10000),
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			b, path := newBox(t)
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Encrypt("x"); !errors.Is(err, ErrKeyFile) {
				t.Fatalf("Encrypt err = %v, want ErrKeyFile", err)
			}
			if _, err := b.Decrypt("enc2:00"); !errors.Is(err, ErrKeyFile) {
				t.Fatalf("Decrypt err = %v, want ErrKeyFile", err)
			}
			if data, _ := os.ReadFile(path); string(data) != content {
				t.Fatal("invalid key file was overwritten")
			}
		})
	}
	t.Run("directory", func(t *testing.T) {
		b, path := newBox(t)
		if err := os.Mkdir(path, 0o700); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Encrypt("x"); !errors.Is(err, ErrKeyFile) {
			t.Fatalf("Encrypt err = %v, want ErrKeyFile", err)
		}
	})
}

func TestSymlinkRefused(t *testing.T) {
	t.Parallel()
	t.Run("to valid key", func(t *testing.T) {
		b, path := newBox(t)
		target := filepath.Join(t.TempDir(), "real_key")
		writeKey(t, target, fixedKeyHex)
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Encrypt("x"); !errors.Is(err, ErrKeyFile) {
			t.Fatalf("Encrypt err = %v, want ErrKeyFile", err)
		}
		if _, err := b.Decrypt(legacyEncode(make([]byte, 32), "x")); !errors.Is(err, ErrKeyFile) {
			t.Fatalf("Decrypt err = %v, want ErrKeyFile", err)
		}
	})
	t.Run("dangling", func(t *testing.T) {
		b, path := newBox(t)
		target := filepath.Join(t.TempDir(), "not_yet")
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Encrypt("x"); !errors.Is(err, ErrKeyFile) {
			t.Fatalf("Encrypt err = %v, want ErrKeyFile", err)
		}
		assertNoFile(t, target) // no key was written through the link
		if !b.KeyExists() {
			t.Fatal("KeyExists = false with an entry at the path")
		}
	})
}

func TestMissingDirectory(t *testing.T) {
	t.Parallel()
	b := New(filepath.Join(t.TempDir(), "absent", ".secret_key"))
	_, err := b.Encrypt("x")
	if err == nil || errors.Is(err, ErrNoKey) || errors.Is(err, ErrKeyFile) {
		t.Fatalf("Encrypt err = %v, want a plain I/O error", err)
	}
}

func TestBoxesRaceToCreateKey(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), ".secret_key")
	const n = 8
	boxes := make([]*Box, n)
	encs := make([]string, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		boxes[i] = New(path)
		wg.Go(func() {
			<-start
			encs[i], errs[i] = boxes[i].Encrypt("value-" + string(rune('a'+i)))
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("box %d: %v", i, err)
		}
	}
	for i, b := range boxes {
		for j, enc := range encs {
			got, err := b.Decrypt(enc)
			if want := "value-" + string(rune('a'+j)); err != nil || got != want {
				t.Fatalf("box %d decrypting box %d's value: %q, %v; want %q", i, j, got, err, want)
			}
		}
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("dir holds %d entries after the race, want only the key", len(entries))
	}
}

func TestConcurrentUseOfOneBox(t *testing.T) {
	t.Parallel()
	b, _ := newBox(t)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Go(func() {
			plain := strings.Repeat("s", i+1)
			enc, err := b.Encrypt(plain)
			if err == nil {
				var got string
				got, err = b.Decrypt(enc)
				if err == nil && got != plain {
					err = errors.New("round trip mismatch")
				}
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestPredicates(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in              string
		encrypted, lega bool
	}{
		{"enc2:00", true, false},
		{"enc:00", true, true},
		{"enc2", false, false},
		{"op://a/b", false, false},
		{"", false, false},
		{"ENC2:00", false, false},
		{"plain", false, false},
	}
	for _, c := range cases {
		if IsEncrypted(c.in) != c.encrypted || IsLegacy(c.in) != c.lega {
			t.Errorf("%q: IsEncrypted=%v IsLegacy=%v", c.in, IsEncrypted(c.in), IsLegacy(c.in))
		}
	}
	if Masked != "***MASKED***" {
		t.Fatalf("Masked = %q", Masked)
	}
}

// TestCreateKeyLosesRace drives the publish step directly against an existing key, the state
// a loser of the race sees: the winner's key must be used and the temp file removed.
func TestCreateKeyLosesRace(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), ".secret_key")
	want := writeKey(t, path, fixedKeyHex)
	got, err := createKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(got) != hex.EncodeToString(want) {
		t.Fatal("createKey replaced the existing key instead of adopting it")
	}
	if data, _ := os.ReadFile(path); string(data) != fixedKeyHex {
		t.Fatal("existing key file was clobbered")
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("dir holds %d entries, want only the key", len(entries))
	}
}
