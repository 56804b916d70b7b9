package secrets

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzDecrypt feeds arbitrary stored values to Decrypt (it must never panic, and any failure must
// be a sentinel) and checks that Encrypt round-trips every plain input.
func FuzzDecrypt(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, ".secret_key")
	b := New(path)
	seed, err := b.Encrypt("seed-secret")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{seed, "", "enc2:", "enc:", "enc:00ff", "op://x", "plain", seed[:len(seed)-3], "enc2:" + strings.Repeat("0", 56)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stored string) {
		got, err := b.Decrypt(stored)
		switch {
		case !IsEncrypted(stored):
			if err != nil || got != stored {
				t.Fatalf("Decrypt(%q) = %q, %v; want unchanged", stored, got, err)
			}
		case err != nil && !errors.Is(err, ErrDecrypt):
			t.Fatalf("Decrypt(%q) err = %v, want ErrDecrypt", stored, err)
		}

		enc, err := b.Encrypt(stored)
		if err != nil {
			if !IsLegacy(stored) || !errors.Is(err, ErrDecrypt) {
				t.Fatalf("Encrypt(%q): %v", stored, err)
			}
			return
		}
		back, err := b.Decrypt(enc)
		if strings.HasPrefix(stored, "enc2:") {
			return // passed through unchanged; covered above
		}
		want := stored
		if IsLegacy(stored) {
			want = got
		}
		if err != nil || back != want {
			t.Fatalf("round trip of %q: got %q, %v; want %q", stored, back, err, want)
		}
	})
}
