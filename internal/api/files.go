package api

// File attachment and chunked upload methods (protocol.md §6 file/attach, §7).
const (
	MethodFileAttach       = "file/attach"
	MethodFileUploadBegin  = "file/upload/begin"
	MethodFileUploadChunk  = "file/upload/chunk"
	MethodFileUploadCommit = "file/upload/commit"
)

// Upload limits of protocol.md §7. They are the contract, not settings.
const (
	// UploadChunkBytes is the most decoded bytes one file/upload/chunk carries.
	UploadChunkBytes = 1 << 20
	// MaxFileBytes is the largest file file/attach or an upload stores (10 MB).
	MaxFileBytes = 10 * 1024 * 1024
	// MaxUploadsPerConn is how many uploads one connection may stage at once.
	MaxUploadsPerConn = 4
	// UploadBudgetBytes bounds what all connections together stage: payloads plus retained metadata.
	UploadBudgetBytes = 256 << 20
	// MaxFilenameBytes is the longest filename an upload or an attachment may carry.
	MaxFilenameBytes = 255
	// MaxAttachRequestBytes bounds the files of one file/attach (or one prompt's attachments) together.
	MaxAttachRequestBytes = 2 * MaxFileBytes
)

// FileAttachParams are the params of file/attach.
type FileAttachParams struct {
	SessionID string      `json:"session_id"`
	Files     []FileEntry `json:"files"`
}

// FileAttachment is one stored file: its content address (ref_id, "sha256:<hex>"), the marker the model sees,
// where it lies in the agent's workspace, its size, and whether the session had it already.
type FileAttachment struct {
	RefID         string `json:"ref_id"`
	Marker        string `json:"marker"`
	WorkspacePath string `json:"workspace_path"`
	SizeBytes     int64  `json:"size_bytes"`
	Deduplicated  bool   `json:"deduplicated"`
}

// FileAttachResult is the result of file/attach, one entry per file in order.
type FileAttachResult struct {
	Files []FileAttachment `json:"files"`
}

// UploadBeginParams are the params of file/upload/begin. SizeBytes is required.
type UploadBeginParams struct {
	SessionID string  `json:"session_id"`
	SizeBytes *int64  `json:"size_bytes"`
	Filename  *string `json:"filename,omitempty"`
	MimeType  string  `json:"mime_type,omitempty"`
	SHA256    *string `json:"sha256,omitempty"`
}

// UploadBeginResult is the result of file/upload/begin.
type UploadBeginResult struct {
	UploadID   string `json:"upload_id"`
	ChunkBytes int    `json:"chunk_bytes"`
	MaxBytes   int    `json:"max_bytes"`
}

// UploadChunkParams are the params of file/upload/chunk.
type UploadChunkParams struct {
	UploadID string `json:"upload_id"`
	Offset   *int64 `json:"offset"`
	DataB64  string `json:"data_b64"`
}

// UploadChunkResult is the result of file/upload/chunk: the bytes received so far.
type UploadChunkResult struct {
	ReceivedBytes int64 `json:"received_bytes"`
}

// UploadCommitParams are the params of file/upload/commit; the result is a FileAttachment.
type UploadCommitParams struct {
	UploadID string `json:"upload_id"`
}
