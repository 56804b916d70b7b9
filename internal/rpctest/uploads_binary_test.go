package rpctest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// binaryCaps asks for binary upload chunks in initialize.
const binaryCaps = `{"binary_upload_chunks":true}`

// binChunk sends a binary chunk (its line with data_len = len(data), then data) and returns received_bytes.
func (c *rc) binChunk(id string, offset int, data []byte) (int64, *wireError) {
	c.t.Helper()
	c.next++
	rid := fmt.Sprintf("r%d", c.next)
	line := fmt.Sprintf(`{"jsonrpc":"2.0","method":"file/upload/chunk","params":{"upload_id":%q,"offset":%d,"data_len":%d},"id":%q}`+"\n",
		id, offset, len(data), rid)
	c.SendRaw(append([]byte(line), data...))
	f := c.recv()
	if idOf(f) != rid {
		c.t.Fatalf("binary chunk: expected the response to %s, got %s", rid, f.Raw)
	}
	var r api.UploadChunkResult
	if f.Error == nil {
		if err := json.Unmarshal(f.Result, &r); err != nil {
			c.t.Fatalf("chunk: decode %s: %v", f.Result, err)
		}
	}
	return r.ReceivedBytes, f.Error
}

// initExtensions initializes a raw connection with clientCapabilities caps ("" for none) and returns the
// extensions initialize enabled.
func initExtensions(t *testing.T, c *Client, caps string) []string {
	t.Helper()
	params := `{"protocol_version":1}`
	if caps != "" {
		params = `{"protocol_version":1,"clientCapabilities":` + caps + `}`
	}
	c.Send(`{"jsonrpc":"2.0","method":"initialize","params":` + params + `,"id":"init"}`)
	f := c.Frame()
	if f.Error != nil {
		t.Fatalf("initialize: %s", f.Raw)
	}
	var r api.InitializeResult
	if err := json.Unmarshal(f.Result, &r); err != nil {
		t.Fatal(err)
	}
	return r.Extensions
}

// Binary chunks are enabled only for a client that asks for them; others see no extensions field at all.
func TestBinaryChunksNegotiated(t *testing.T) {
	t.Parallel()
	d := Start(t)
	for _, tc := range []struct {
		caps string
		want []string
	}{
		{"", nil},
		{`{"binary_upload_chunks":false}`, nil},
		{`{"elicitation":{"form":{}}}`, nil},
		{binaryCaps, []string{api.ExtBinaryUploadChunks}},
	} {
		if got := initExtensions(t, d.Dial(t), tc.caps); !slices.Equal(got, tc.want) {
			t.Errorf("clientCapabilities %s: extensions %v, want %v", tc.caps, got, tc.want)
		}
	}
	c := d.Dial(t)
	c.Send(`{"jsonrpc":"2.0","method":"initialize","params":{"protocol_version":1},"id":1}`)
	if line := c.MustRecv(); strings.Contains(line, "extensions") {
		t.Fatalf("initialize without the capability mentions extensions: %s", line)
	}
}

// A file sent in binary chunks is stored like one sent in data_b64, under the same chunk rules: a re-sent
// accepted chunk is acknowledged, other bytes at an accepted offset, a gap and bytes past the size are refused
// and the connection goes on (the refused chunk's bytes were read); a re-sent file is deduplicated.
func TestBinaryChunkUpload(t *testing.T) {
	t.Parallel()
	d := Start(t)
	c := dialRC(t, d, binaryCaps)
	s := c.newSession(api.SessionNewParams{SessionID: "bin"})
	data := payload(2*api.UploadChunkBytes+12345, 7)
	id := c.mustBegin("bin", int64(len(data)), map[string]any{"filename": "big.bin", "sha256": sha(data)})

	first := data[:api.UploadChunkBytes]
	if n, werr := c.binChunk(id, 0, first); werr != nil || n != api.UploadChunkBytes {
		t.Fatalf("chunk 0: %d %s", n, werr)
	}
	if n, werr := c.binChunk(id, 0, first); werr != nil || n != api.UploadChunkBytes {
		t.Fatalf("re-sent chunk 0: %d %s", n, werr)
	}
	other := bytes.Clone(first)
	other[5] ^= 1
	if _, werr := c.binChunk(id, 0, other); werr == nil || werr.Code != api.CodeInvalidParams || !strings.Contains(werr.Message, "overlaps") {
		t.Fatalf("other bytes at offset 0: %v", werr)
	}
	if _, werr := c.binChunk(id, 2*api.UploadChunkBytes, data[2*api.UploadChunkBytes:]); werr == nil || !strings.Contains(werr.Message, "gap") {
		t.Fatalf("gap: %v", werr)
	}
	// A data_b64 chunk on the same connection still works, and both in one request is refused.
	if n, werr := c.chunk(id, api.UploadChunkBytes, data[api.UploadChunkBytes:2*api.UploadChunkBytes]); werr != nil || n != 2*api.UploadChunkBytes {
		t.Fatalf("data_b64 chunk: %d %s", n, werr)
	}
	c.next++
	c.SendRaw(append([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"file/upload/chunk","params":{"upload_id":%q,"offset":%d,"data_len":3,"data_b64":"AAAA"},"id":"both"}`+"\n", id, 2*api.UploadChunkBytes)), 1, 2, 3))
	if f := c.recv(); f.Error == nil || f.Error.Code != api.CodeInvalidParams || !strings.Contains(f.Error.Message, "data_b64") {
		t.Fatalf("data_len with data_b64: %s", f.Raw)
	}
	past := append(bytes.Clone(data[2*api.UploadChunkBytes:]), 0)
	if _, werr := c.binChunk(id, 2*api.UploadChunkBytes, past); werr == nil || !strings.Contains(werr.Message, "past the declared size") {
		t.Fatalf("past the size: %v", werr)
	}
	if n, werr := c.binChunk(id, 2*api.UploadChunkBytes, data[2*api.UploadChunkBytes:]); werr != nil || n != int64(len(data)) {
		t.Fatalf("last chunk: %d %s", n, werr)
	}
	a, werr := c.commit(id)
	if werr != nil {
		t.Fatalf("commit: %s", werr)
	}
	path := stored(s.WorkspaceDir, data, ".bin")
	if a.WorkspacePath != path || a.SizeBytes != int64(len(data)) || a.Deduplicated {
		t.Fatalf("commit = %+v", a)
	}
	wantFile(t, path, data)

	id = c.mustBegin("bin", int64(len(data)), map[string]any{"filename": "big.bin"})
	for off := 0; off < len(data); off += api.UploadChunkBytes {
		if _, werr := c.binChunk(id, off, data[off:min(off+api.UploadChunkBytes, len(data))]); werr != nil {
			t.Fatalf("again, chunk at %d: %s", off, werr)
		}
	}
	if a, werr = c.commit(id); werr != nil || !a.Deduplicated || a.WorkspacePath != path {
		t.Fatalf("re-sent file: %+v %s", a, werr)
	}
}

// A data_len that cannot be trusted loses the stream's position: the request gets -32602 naming data_len, then
// the connection closes.
func TestBinaryChunkBadLength(t *testing.T) {
	t.Parallel()
	d := Start(t)
	for _, dataLen := range []string{"0", "-1", fmt.Sprint(api.UploadChunkBytes + 1), `"12"`, "1.5", "null"} {
		c := dialRC(t, d, binaryCaps)
		id := c.mustBegin(c.newSession(api.SessionNewParams{}).SessionID, 10, nil)
		c.SendRaw([]byte(`{"jsonrpc":"2.0","method":"file/upload/chunk","params":{"upload_id":"` + id + `","offset":0,"data_len":` + dataLen + `},"id":"bad"}` + "\n" + "0123456789"))
		f := c.recv()
		if dataLen == "null" { // no data_len: a data_b64 chunk without data_b64, an ordinary refusal
			if f.Error == nil || f.Error.Code != api.CodeInvalidParams || idOf(f) != "bad" {
				t.Fatalf("data_len null: %s", f.Raw)
			}
			continue
		}
		if f.Error == nil || f.Error.Code != api.CodeInvalidParams || idOf(f) != "bad" ||
			!strings.Contains(f.Error.Message, "data_len") || !strings.Contains(f.Error.Message, "connection is closed") {
			t.Fatalf("data_len %s: %s", dataLen, f.Raw)
		}
		c.ExpectEOF(10 * time.Second)
	}
}

// Raw bytes that stop short of data_len (the client's input ends) get an error naming how far they got, and
// the connection closes.
func TestBinaryChunkCutShort(t *testing.T) {
	t.Parallel()
	d := Start(t)
	c := dialRC(t, d, binaryCaps)
	id := c.mustBegin(c.newSession(api.SessionNewParams{}).SessionID, 1000, nil)
	c.SendRaw([]byte(`{"jsonrpc":"2.0","method":"file/upload/chunk","params":{"upload_id":"` + id + `","offset":0,"data_len":1000},"id":"short"}` + "\n" + "0123456789"))
	if err := c.Conn().(*net.UnixConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	f := c.recv()
	if f.Error == nil || f.Error.Code != api.CodeInvalidRequest || idOf(f) != "short" ||
		!strings.Contains(f.Error.Message, "10 bytes into a 1000-byte payload") || !strings.Contains(string(f.Error.Data), "payload_cut_short") {
		t.Fatalf("cut short: %s", f.Raw)
	}
	c.ExpectEOF(10 * time.Second)
}

// A client that did not ask for binary chunks never gets them: data_len means nothing, the chunk is refused as
// empty, and what follows the line is read as frames.
func TestBinaryChunkNotNegotiated(t *testing.T) {
	t.Parallel()
	d := Start(t)
	c := dialRC(t, d, "")
	id := c.mustBegin(c.newSession(api.SessionNewParams{}).SessionID, 3, nil)
	c.SendRaw([]byte(`{"jsonrpc":"2.0","method":"file/upload/chunk","params":{"upload_id":"` + id + `","offset":0,"data_len":3},"id":"x"}` + "\n"))
	if f := c.recv(); f.Error == nil || f.Error.Code != api.CodeInvalidParams || !strings.Contains(f.Error.Message, "got 0") {
		t.Fatalf("data_len without the extension: %s", f.Raw)
	}
	c.SendRaw([]byte("abc\n"))
	if f := c.recv(); f.Error == nil || f.Error.Code != -32700 {
		t.Fatalf("raw bytes after the line without the extension: %s", f.Raw)
	}
	if n, werr := c.chunk(id, 0, []byte("abc")); werr != nil || n != 3 {
		t.Fatalf("data_b64 chunk: %d %s", n, werr)
	}
}

// Over WSS (not a local transport, and one message per frame) a client that asks for binary chunks does not
// get them.
func TestBinaryChunksNotOverWSS(t *testing.T) {
	t.Parallel()
	pki := NewPKI(t)
	d, g, code := StartGateway(t, WSSConfig(pki))
	c, _, err := DialWSS(t, d.WSSAddr(t), pki, BearerHeader(PairOnce(t, g, code)))
	if err != nil {
		t.Fatal(err)
	}
	init, _ := c.Call("initialize", map[string]any{"protocol_version": 1, "clientCapabilities": map[string]any{"binary_upload_chunks": true}})
	res, _ := init["result"].(map[string]any)
	if res == nil {
		t.Fatalf("initialize over wss: %v", init)
	}
	if ext, ok := res["extensions"]; ok {
		t.Fatalf("extensions over wss: %v", ext)
	}
}
