package rpc

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
	"github.com/zeroclaw-go/zeroclaw/internal/upload"
)

// file/upload/chunk is most of an upload's bytes: its frame is a 1.4 MB base64 string with a few small fields
// around it. The generic path (router.DecodeParams into api.UploadChunkParams) copies that string; the fast path
// takes it as a slice of the frame and decodes it from there straight into the staged bytes. It applies when the
// string is plain: exactly one member named data_b64, spelled so (no escapes, no camelCase alias anywhere in the
// params, so no other key can stand for it), holding a string without escapes. Every other input, and every
// other field, goes through the generic decoder, so both paths accept and refuse the same params with the same
// errors (TestChunkFastPathMatchesGeneric, FuzzChunkParams).

// chunkMeta is file/upload/chunk's params but data_b64, which the fast path takes from the frame itself.
type chunkMeta struct {
	UploadID string `json:"upload_id"`
	Offset   *int64 `json:"offset"`
}

// serveChunk serves file/upload/chunk's params raw (valid: already validated as JSON) on the connection's
// staging area st. allowed is the method's own check (local transports only), run after the params are decoded,
// as with every method. generic forces the generic decoder (for tests).
func serveChunk(st func() *upload.Staging, raw json.RawMessage, valid, generic bool, allowed func() error) (api.UploadChunkResult, error) {
	var (
		meta chunkMeta
		data []byte
		fast bool
		err  error
	)
	if !generic {
		data, fast = plainDataB64(raw, valid)
	}
	if fast {
		err = router.DecodeValidParams(raw, &meta)
	} else {
		var p api.UploadChunkParams
		if err = decodeParams(raw, valid, &p); err == nil {
			meta, data = chunkMeta{UploadID: p.UploadID, Offset: p.Offset}, []byte(p.DataB64)
		}
	}
	if err != nil {
		return api.UploadChunkResult{}, err
	}
	if err := allowed(); err != nil {
		return api.UploadChunkResult{}, err
	}
	if meta.Offset == nil {
		return api.UploadChunkResult{}, router.InvalidParams("file/upload/chunk needs offset")
	}
	n, err := st().ChunkBytes(meta.UploadID, *meta.Offset, data)
	if err != nil && fast && !utf8.Valid(data) {
		// Only for params that did not come through the Reader, which repairs invalid UTF-8: the generic decoder
		// would have replaced the invalid bytes, so its refusal is the one to give. A refused chunk changed
		// nothing, so asking again is safe.
		return serveChunk(st, raw, valid, true, allowed)
	}
	return api.UploadChunkResult{ReceivedBytes: n}, err
}

func decodeParams(raw json.RawMessage, valid bool, dst any) error {
	if valid {
		return router.DecodeValidParams(raw, dst)
	}
	return router.DecodeParams(raw, dst)
}

// plainDataB64 returns the base64 of params raw, a JSON object, as a slice of raw, when the fast path applies
// (see above); valid: raw was validated already.
func plainDataB64(raw json.RawMessage, valid bool) ([]byte, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' || !valid && !jsonrpc.Valid(raw) {
		return nil, false
	}
	var val []byte
	n := 0
	for key, v := range jsonrpc.RawMembers(raw) {
		if string(key) == `"data_b64"` {
			val, n = v, n+1
			continue
		}
		for _, c := range key {
			if c == '\\' || 'A' <= c && c <= 'Z' || c >= utf8.RuneSelf {
				return nil, false // this key might be an alias of data_b64
			}
		}
	}
	if n != 1 || len(val) < 2 || val[0] != '"' || bytes.IndexByte(val, '\\') >= 0 {
		return nil, false
	}
	return val[1 : len(val)-1], true
}
