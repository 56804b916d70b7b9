package upload

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/dbfile"
)

// ReadEntry turns a FileEntry (file/attach, session/prompt attachments) into a File: data_b64 decoded, or the
// file at path read, which only a caller allowed to make the daemon read its files may ask for (mayReadPath;
// else ErrForbidden). Exactly one of the two must be given, the file must fit api.MaxFileBytes and the filename
// api.MaxFilenameBytes (else ErrInvalid). A path must be absolute and name a regular file.
func ReadEntry(e api.FileEntry, mayReadPath bool) (File, error) {
	switch {
	case e.Path != "" && e.DataB64 != "":
		return File{}, invalid("a file entry carries either path or data_b64, not both")
	case e.Path == "" && e.DataB64 == "":
		return File{}, invalid("a file entry needs path or data_b64")
	case len(e.Filename) > api.MaxFilenameBytes:
		return File{}, invalid("filename is %d bytes; the limit is %d", len(e.Filename), api.MaxFilenameBytes)
	case len(e.MimeType) > api.MaxFilenameBytes:
		return File{}, invalid("mime_type is %d bytes; the limit is %d", len(e.MimeType), api.MaxFilenameBytes)
	}
	f := File{Filename: e.Filename, MimeType: e.MimeType}
	if e.DataB64 != "" {
		n, err := decodedLen(bytesOf(e.DataB64))
		if err != nil {
			return File{}, err
		}
		if n > api.MaxFileBytes {
			return File{}, invalid("file of %d bytes exceeds the %d-byte file limit", n, api.MaxFileBytes)
		}
		f.Data = make([]byte, n)
		if m, err := decodeB64(f.Data, bytesOf(e.DataB64)); err != nil || m != n {
			return File{}, invalid("data_b64 is not valid padded standard base64")
		}
	} else {
		if !mayReadPath {
			return File{}, fmt.Errorf("%w: path attachments are served only to local peers running as the daemon's user (or an admin); send data_b64", ErrForbidden)
		}
		if !filepath.IsAbs(e.Path) {
			return File{}, invalid("path must be absolute: %q", e.Path)
		}
		data, err := readFile(e.Path)
		if err != nil {
			return File{}, err
		}
		f.Data = data
		if f.Filename == "" {
			f.Filename = filepath.Base(e.Path)
		}
	}
	f.Sum = sha256.Sum256(f.Data)
	return f, nil
}

// readFile reads a regular file of at most api.MaxFileBytes, never more than one byte past the limit.
func readFile(path string) ([]byte, error) {
	fh, err := dbfile.OpenFile(path, os.O_RDONLY|oNonBlock, 0)
	if errors.Is(err, dbfile.ErrLive) {
		return nil, invalid("cannot attach %s: it is a database the daemon has open (attach a copy: zeroclaw backup)", path)
	}
	if err != nil {
		return nil, invalid("cannot read %s: %v", path, err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, invalid("cannot read %s: %v", path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, invalid("%s is not a regular file", path)
	}
	if st.Size() > api.MaxFileBytes {
		return nil, invalid("file of %d bytes exceeds the %d-byte file limit", st.Size(), api.MaxFileBytes)
	}
	data, err := io.ReadAll(io.LimitReader(fh, api.MaxFileBytes+1))
	if err != nil {
		return nil, invalid("cannot read %s: %v", path, err)
	}
	if len(data) > api.MaxFileBytes {
		return nil, invalid("file exceeds the %d-byte file limit", api.MaxFileBytes)
	}
	return data, nil
}
