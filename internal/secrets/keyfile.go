package secrets

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/crypto/chacha20poly1305"

	"github.com/zeroclaw-go/zeroclaw/internal/atomicfile"
)

const (
	keySize    = chacha20poly1305.KeySize
	keyHexLen  = 2 * keySize
	keyMaxRead = 4096 // a valid file is 64 bytes plus whitespace; cap reads of anything bigger
)

func keyPathExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// readKey loads the key at path. A missing file is ErrNoKey; a symlink, non-regular file or
// bad content is ErrKeyFile. The key bytes never appear in an error.
func readKey(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoKey
	}
	if err != nil {
		return nil, fmt.Errorf("secrets: stat key file: %w", err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%w: %s is a symlink", ErrKeyFile, path)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrKeyFile, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("secrets: open key file: %w", err)
	}
	defer f.Close()
	// The path may have been swapped between Lstat and Open: insist it is still the same file.
	ofi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("secrets: stat key file: %w", err)
	}
	if !os.SameFile(fi, ofi) {
		return nil, fmt.Errorf("%w: %s changed while being opened", ErrKeyFile, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, keyMaxRead+1))
	if err != nil {
		return nil, fmt.Errorf("secrets: read key file: %w", err)
	}
	return parseKey(path, data)
}

func parseKey(path string, data []byte) ([]byte, error) {
	text := strings.TrimSpace(string(data))
	if len(text) != keyHexLen {
		return nil, fmt.Errorf("%w: %s does not hold %d hex characters", ErrKeyFile, path, keyHexLen)
	}
	key, err := hex.DecodeString(text)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not hex", ErrKeyFile, path)
	}
	return key, nil
}

// createKey generates a key and publishes it at path without clobbering (atomicfile.CreateNoClobber: a 0600
// temp file in the same directory, fsynced, hard-linked into place). If another process published first,
// that key wins and is returned instead.
func createKey(path string) ([]byte, error) {
	key := make([]byte, keySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("secrets: generate key: %w", err)
	}
	err := atomicfile.CreateNoClobber(path, []byte(hex.EncodeToString(key)), 0o600)
	if errors.Is(err, fs.ErrExist) {
		return readKey(path)
	}
	if err != nil {
		return nil, fmt.Errorf("secrets: create key file: %w", err)
	}
	return key, nil
}
