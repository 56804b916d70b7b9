package rpc

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
)

// FuzzBinaryChunkLen: whatever a chunk's params hold, the reader's question "how many raw bytes follow?" gets
// either none (no data_len; a data_b64 chunk), a length from 1 to api.UploadChunkBytes that equals the data_len
// the params give, or a -32602 that says the connection is closed. It never panics, and a connection that did
// not enable binary chunks, or another method, always gets none.
func FuzzBinaryChunkLen(f *testing.F) {
	for _, s := range []string{
		`{"upload_id":"x","offset":0,"data_len":5}`, `{"data_len":0}`, `{"data_len":-3}`, `{"data_len":1048577}`,
		`{"data_len":1048576}`, `{"data_len":"7"}`, `{"data_len":1.5}`, `{"data_len":1e3}`, `{"dataLen":9}`,
		`{"data_len":9,"dataLen":9}`, `{"data_len":9,"dataLen":8}`, `{"data_len":null}`, `[1]`, `{"data_len":9`,
		`{"data_b64":"aGk=","offset":0}`, `{"data_len":99999999999999999999999}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, params string) {
		valid := json.Valid([]byte(params))
		on, off := &Peer{}, &Peer{}
		on.binaryChunks.Store(true)
		req := &jsonrpc.Request{Method: api.MethodFileUploadChunk, Params: json.RawMessage(params)}
		if n, err := off.chunkPayload(req); n != 0 || err != nil {
			t.Fatalf("not enabled: %d %v", n, err)
		}
		if n, err := on.chunkPayload(&jsonrpc.Request{Method: api.MethodStatus, Params: req.Params}); n != 0 || err != nil {
			t.Fatalf("another method: %d %v", n, err)
		}
		n, err := on.chunkPayload(req)
		if err != nil {
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != api.CodeInvalidParams {
				t.Fatalf("%q: error %v is not -32602", params, err)
			}
			if valid && !strings.Contains(rpcErr.Message, "connection is closed") {
				t.Fatalf("%q: %q does not say the connection closes", params, rpcErr.Message)
			}
			return
		}
		if n == 0 {
			return
		}
		if n < 1 || n > api.UploadChunkBytes {
			t.Fatalf("%q: length %d", params, n)
		}
		var m struct {
			DataLen int64 `json:"data_len"`
		}
		if json.Unmarshal([]byte(params), &m) == nil && m.DataLen != 0 && m.DataLen != int64(n) {
			t.Fatalf("%q: length %d, data_len %d", params, n, m.DataLen)
		}
	})
}
