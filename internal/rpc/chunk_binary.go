package rpc

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
	"github.com/zeroclaw-go/zeroclaw/internal/upload"
)

// Binary upload chunks (api.ExtBinaryUploadChunks), our extension: on a connection whose initialize enabled
// them, a file/upload/chunk whose params carry data_len instead of data_b64 is followed on the stream by exactly
// data_len raw bytes, which the connection's reader reads into a buffer of their own (jsonrpc.Options.Payload)
// and the handler copies into the staged upload: no base64 to encode, carry or decode. Every rule of a chunk
// still applies (the handler checks it after the bytes are read, so a refused chunk leaves the stream in step).
// A data_len that is not an integer from 1 to api.UploadChunkBytes loses the stream's position: the request is
// answered -32602 and the connection closed.

// lost ends the message of an error that closes the connection.
const lost = "; the stream's position is lost, the connection is closed"

// binaryChunkLen is what the reader needs of a binary chunk's params before its bytes.
type binaryChunkLen struct {
	DataLen *int64 `json:"data_len"`
}

// binaryChunkParams are a binary chunk's params, as its handler reads them.
type binaryChunkParams struct {
	UploadID string          `json:"upload_id"`
	Offset   *int64          `json:"offset"`
	DataB64  json.RawMessage `json:"data_b64"`
}

// chunkPayload is the connection's jsonrpc.Options.Payload: how many raw bytes follow req's frame, which is
// none but for a file/upload/chunk with data_len on a connection that enabled binary chunks.
func (p *Peer) chunkPayload(req *jsonrpc.Request) (int, error) {
	if req.Method != api.MethodFileUploadChunk || !p.binaryChunks.Load() {
		return 0, nil
	}
	var m binaryChunkLen
	if err := decodeParams(req.Params, req.ParamsValidated(), &m); err != nil {
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) {
			return 0, jsonrpc.NewError(rpcErr.Code, rpcErr.Message+lost, rpcErr.Data)
		}
		return 0, err
	}
	if m.DataLen == nil {
		return 0, nil // a data_b64 chunk
	}
	if n := *m.DataLen; n < 1 || n > api.UploadChunkBytes {
		return 0, router.InvalidParams(fmt.Sprintf("data_len must be from 1 to %d (the bytes that follow the line), got %d%s",
			api.UploadChunkBytes, n, lost))
	}
	return int(*m.DataLen), nil
}

// serveBinaryChunk serves a binary file/upload/chunk: its params (raw; valid: already validated) and data, the
// bytes that followed its frame.
func serveBinaryChunk(st *upload.Staging, raw json.RawMessage, valid bool, data []byte, allowed func() error) (api.UploadChunkResult, error) {
	var m binaryChunkParams
	if err := decodeParams(raw, valid, &m); err != nil {
		return api.UploadChunkResult{}, err
	}
	if err := allowed(); err != nil {
		return api.UploadChunkResult{}, err
	}
	if m.Offset == nil {
		return api.UploadChunkResult{}, router.InvalidParams("file/upload/chunk needs offset")
	}
	if m.DataB64 != nil {
		return api.UploadChunkResult{}, router.InvalidParams("a chunk with data_len carries its bytes after the line; it must not carry data_b64 too")
	}
	n, err := st.ChunkRaw(m.UploadID, *m.Offset, data)
	return api.UploadChunkResult{ReceivedBytes: n}, err
}
