package secrets

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/crypto/chacha20poly1305"
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

// createKey generates a key and publishes it at path without clobbering: it writes a 0600 temp
// file in the same directory, fsyncs it and hard-links it into place. If another process
// published first (EEXIST), that key wins and is returned instead.
func createKey(path string) ([]byte, error) {
	key := make([]byte, keySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("secrets: generate key: %w", err)
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".secret_key.tmp-*")
	if err != nil {
		return nil, fmt.Errorf("secrets: create key file: %w", err)
	}
	tmpName := tmp.Name()
	// The published key is the hard link; the temp name always goes. A failed remove leaves
	// only a 0600 copy beside the key, so it does not fail the call.
	defer os.Remove(tmpName)
	if err := writeSynced(tmp, hex.EncodeToString(key)); err != nil {
		return nil, fmt.Errorf("secrets: write key file: %w", err)
	}
	if err := os.Link(tmpName, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return readKey(path)
		}
		return nil, fmt.Errorf("secrets: publish key file: %w", err)
	}
	_ = os.Remove(tmpName) // before the dir fsync, so the removal is durable too
	if err := syncDir(dir); err != nil {
		return nil, fmt.Errorf("secrets: sync key dir: %w", err)
	}
	return key, nil
}

func writeSynced(f *os.File, content string) error {
	err := f.Chmod(0o600)
	if err == nil {
		_, err = f.WriteString(content)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir makes a directory entry change durable. Windows cannot fsync directories; NTFS
// journals the metadata itself, so it is skipped there.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
