package rpctest

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// b64 is the standard padded base64 of b, as data_b64 carries it.
func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// sha is the lowercase hex SHA-256 of b.
func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// payload is n pseudo-random bytes drawn from seed.
func payload(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// begin calls file/upload/begin for size bytes of session sid; extra adds or overrides params.
func (c *rc) begin(sid string, size int64, extra map[string]any) (api.UploadBeginResult, *wireError) {
	c.t.Helper()
	p := map[string]any{"session_id": sid, "size_bytes": size}
	for k, v := range extra {
		p[k] = v
	}
	var r api.UploadBeginResult
	res, werr := c.call(api.MethodFileUploadBegin, p)
	if werr == nil {
		if err := json.Unmarshal(res, &r); err != nil {
			c.t.Fatalf("begin: decode %s: %v", res, err)
		}
	}
	return r, werr
}

// mustBegin is begin that fails the test on an error.
func (c *rc) mustBegin(sid string, size int64, extra map[string]any) string {
	c.t.Helper()
	r, werr := c.begin(sid, size, extra)
	if werr != nil {
		c.t.Fatalf("begin %d bytes: %s", size, werr)
	}
	return r.UploadID
}

// chunk sends data at offset and returns received_bytes.
func (c *rc) chunk(id string, offset int, data []byte) (int64, *wireError) {
	c.t.Helper()
	var r api.UploadChunkResult
	res, werr := c.call(api.MethodFileUploadChunk, map[string]any{"upload_id": id, "offset": offset, "data_b64": b64(data)})
	if werr == nil {
		if err := json.Unmarshal(res, &r); err != nil {
			c.t.Fatalf("chunk: decode %s: %v", res, err)
		}
	}
	return r.ReceivedBytes, werr
}

// sendAll sends data in chunks of api.UploadChunkBytes, failing the test on any error.
func (c *rc) sendAll(id string, data []byte) {
	c.t.Helper()
	for off := 0; off < len(data); off += api.UploadChunkBytes {
		end := min(off+api.UploadChunkBytes, len(data))
		n, werr := c.chunk(id, off, data[off:end])
		if werr != nil || n != int64(end) {
			c.t.Fatalf("chunk at %d: received %d, %s", off, n, werr)
		}
	}
}

// commit calls file/upload/commit.
func (c *rc) commit(id string) (api.FileAttachment, *wireError) {
	c.t.Helper()
	var r api.FileAttachment
	res, werr := c.call(api.MethodFileUploadCommit, map[string]any{"upload_id": id})
	if werr == nil {
		if err := json.Unmarshal(res, &r); err != nil {
			c.t.Fatalf("commit: decode %s: %v", res, err)
		}
	}
	return r, werr
}

// attach calls file/attach with the given entries.
func (c *rc) attach(sid string, files ...map[string]any) (api.FileAttachResult, *wireError) {
	c.t.Helper()
	var r api.FileAttachResult
	res, werr := c.call(api.MethodFileAttach, map[string]any{"session_id": sid, "files": files})
	if werr == nil {
		if err := json.Unmarshal(res, &r); err != nil {
			c.t.Fatalf("attach: decode %s: %v", res, err)
		}
	}
	return r, werr
}

// upload sends data through begin, chunks and commit, failing the test on any error.
func (c *rc) upload(sid, filename string, data []byte) api.FileAttachment {
	c.t.Helper()
	id := c.mustBegin(sid, int64(len(data)), map[string]any{"filename": filename, "sha256": sha(data)})
	c.sendAll(id, data)
	a, werr := c.commit(id)
	if werr != nil {
		c.t.Fatalf("commit: %s", werr)
	}
	return a
}

// stored is where a file with data and filename's extension lies in workspace.
func stored(workspace string, data []byte, ext string) string {
	return filepath.Join(workspace, "uploads", sha(data)+ext)
}

// wantFile fails unless path is a regular file (not a link) holding exactly data.
func wantFile(t *testing.T, path string, data []byte) {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatalf("stored file: %v", err)
	}
	if !st.Mode().IsRegular() {
		t.Fatalf("%s is %v, not a regular file", path, st.Mode().Type())
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("%s holds %d bytes (%v), want the %d sent", path, len(got), err, len(data))
	}
}

// wantNoFile fails if anything exists at path.
func wantNoFile(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatalf("%s exists (%v); nothing may be written", path, err)
	}
}

// uploadUser is a config in which this process's uid is the non-admin user alice with the given grants.
func uploadUser(grants ...string) Option {
	g, _ := json.Marshal(grants)
	return WithConfig(fmt.Sprintf("%s\n[permission_profiles.limited]\ngrants = %s\n\n[users.alice]\nuid = %d\npermission_profiles = [\"limited\"]\n",
		baseConfig, g, os.Getuid()))
}
