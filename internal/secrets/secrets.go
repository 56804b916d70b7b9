// Package secrets encrypts and decrypts secret config values ("enc2:" ChaCha20-Poly1305)
// with the install's .secret_key, which it creates lazily and publishes without clobbering.
package secrets

import (
	"crypto/cipher"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/crypto/chacha20poly1305"
)

// Masked replaces a secret value wherever it would otherwise be shown (RPC results, status, docs).
const Masked = "***MASKED***"

// Value prefixes of stored secrets.
const (
	prefixEnc2   = "enc2:"
	prefixLegacy = "enc:"
	prefixOnePw  = "op://"
)

// Sentinel errors. Callers compare with errors.Is; returned errors may wrap them with detail.
var (
	// ErrNoKey means an encrypted value was read but the key file does not exist.
	ErrNoKey = errors.New("secrets: .secret_key missing: encrypted values cannot be read; restore it from backup")
	// ErrDecrypt means an encrypted value is corrupt or was written with a different key.
	ErrDecrypt = errors.New("secrets: cannot decrypt value: wrong .secret_key or corrupted data; restore the matching .secret_key from backup or re-enter the secret")
	// ErrKeyFile means the key file exists but is unusable (symlink, not a regular file, not 64 hex chars).
	ErrKeyFile = errors.New("secrets: invalid .secret_key: it must be a regular file (not a symlink) holding 64 hex characters; restore it from backup")
)

// IsEncrypted reports whether stored is an encrypted value ("enc2:" or legacy "enc:").
func IsEncrypted(stored string) bool {
	return strings.HasPrefix(stored, prefixEnc2) || IsLegacy(stored)
}

// IsLegacy reports whether stored is a legacy XOR-encoded "enc:" value that should be re-encrypted.
func IsLegacy(stored string) bool {
	return strings.HasPrefix(stored, prefixLegacy)
}

// Box encrypts and decrypts secret values with the key at one path. It is safe for concurrent use.
// The key is read (or created) on first need and then cached for the Box's lifetime.
type Box struct {
	path string

	mu   sync.Mutex // guards the fields below
	key  []byte     // 32 raw key bytes once loaded
	aead cipher.AEAD
}

// New returns a Box for the key file at keyPath (normally <install>/.secret_key).
// Nothing touches the disk until Encrypt or Decrypt needs the key.
func New(keyPath string) *Box {
	return &Box{path: keyPath}
}

// KeyExists reports whether a key is loaded or a filesystem entry exists at the key path.
// An entry that exists but is invalid still reports true; using it then fails with ErrKeyFile.
func (b *Box) KeyExists() bool {
	b.mu.Lock()
	loaded := b.key != nil
	b.mu.Unlock()
	return loaded || keyPathExists(b.path)
}

// Encrypt returns the value to store for plain. "" and values that are already "enc2:" or
// "op://" references are returned unchanged; a legacy "enc:" value is decrypted and re-encrypted.
// Anything else becomes "enc2:" + lowercase hex(nonce || ciphertext || tag) with a fresh random
// nonce, creating the key file first if none exists. Errors never contain plain or the key.
func (b *Box) Encrypt(plain string) (string, error) {
	switch {
	case plain == "", strings.HasPrefix(plain, prefixEnc2), strings.HasPrefix(plain, prefixOnePw):
		return plain, nil
	case IsLegacy(plain):
		// Decrypt never creates a key: a legacy value without its key is unreadable, not re-keyable.
		dec, err := b.Decrypt(plain)
		if err != nil {
			return "", err
		}
		if dec == "" {
			return "", nil
		}
		plain = dec
	}
	aead, _, err := b.load(true)
	if err != nil {
		return "", err
	}
	buf := make([]byte, chacha20poly1305.NonceSize, chacha20poly1305.NonceSize+len(plain)+aead.Overhead())
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("secrets: nonce: %w", err)
	}
	buf = aead.Seal(buf, buf[:chacha20poly1305.NonceSize], []byte(plain), nil)
	return prefixEnc2 + hex.EncodeToString(buf), nil
}

// Decrypt returns the plaintext of stored. "enc2:" and legacy "enc:" values are decrypted;
// "op://" references and plain values are returned as they are. A missing key file yields
// ErrNoKey (no key is ever created here); a wrong key or corrupt value yields ErrDecrypt.
func (b *Box) Decrypt(stored string) (string, error) {
	if !IsEncrypted(stored) {
		return stored, nil
	}
	aead, key, err := b.load(false)
	if err != nil {
		return "", err
	}
	if payload, ok := strings.CutPrefix(stored, prefixEnc2); ok {
		return openEnc2(aead, payload)
	}
	return openLegacy(key, strings.TrimPrefix(stored, prefixLegacy))
}

func openEnc2(aead cipher.AEAD, payload string) (string, error) {
	raw, err := hex.DecodeString(payload)
	if err != nil {
		return "", fmt.Errorf("%w: value is not hex", ErrDecrypt)
	}
	if len(raw) < chacha20poly1305.NonceSize+aead.Overhead() {
		return "", fmt.Errorf("%w: value too short", ErrDecrypt)
	}
	nonce, sealed := raw[:chacha20poly1305.NonceSize], raw[chacha20poly1305.NonceSize:]
	plain, err := aead.Open(sealed[:0], nonce, sealed, nil)
	if err != nil {
		return "", fmt.Errorf("%w: authentication failed", ErrDecrypt)
	}
	return string(plain), nil
}

// openLegacy undoes the legacy scheme: bytes XORed with the key repeated cyclically.
// It cannot be authenticated; rejecting non-UTF-8 output catches most wrong-key cases.
func openLegacy(key []byte, payload string) (string, error) {
	raw, err := hex.DecodeString(payload)
	if err != nil {
		return "", fmt.Errorf("%w: legacy value is not hex", ErrDecrypt)
	}
	for i := range raw {
		raw[i] ^= key[i%len(key)]
	}
	if !utf8.Valid(raw) {
		return "", fmt.Errorf("%w: legacy value is not valid text", ErrDecrypt)
	}
	return string(raw), nil
}

// load returns the cached cipher and key, reading the key file (or, if create, creating it) first.
func (b *Box) load(create bool) (cipher.AEAD, []byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.aead != nil {
		return b.aead, b.key, nil
	}
	key, err := readKey(b.path)
	if errors.Is(err, ErrNoKey) && create {
		key, err = createKey(b.path)
	}
	if err != nil {
		return nil, nil, err
	}
	aead, err := chacha20poly1305.New(key)
	if err != nil {
		return nil, nil, fmt.Errorf("secrets: cipher: %w", err)
	}
	b.key, b.aead = key, aead
	return aead, key, nil
}
