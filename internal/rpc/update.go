package rpc

import (
	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
)

// updateParams is a session/update notification's params. The updates a streamed answer sends per chunk (only
// the session, the type and the text set) append themselves to the frame without encoding/json's reflection;
// any other update is encoded by encoding/json (the struct tags are api.SessionUpdate's), to the same bytes.
type updateParams api.SessionUpdate

var _ jsonrpc.JSONAppender = (*updateParams)(nil)

// AppendJSON appends {"session_id":...,"type":...,"text":...} (text omitted when empty, as its omitempty tag says)
// when no other field is set.
func (u *updateParams) AppendJSON(dst []byte) ([]byte, bool) {
	if u.ToolCallID != "" || u.Name != "" || u.RawInput != nil || u.RawOutput != nil || u.IsError ||
		u.DroppedMessages != nil || u.KeptTurns != nil || u.Reason != "" || u.RequestID != "" || u.ToolName != "" ||
		u.ArgumentsSummary != "" || u.TimeoutSecs != 0 || u.Risk != "" || u.Approver != "" || u.InputTokens != nil || u.OutputTokens != nil ||
		u.MaxContextTokens != nil || u.Entries != nil || u.Level != "" || u.Outcome != "" || u.Content != nil ||
		u.Error != "" || u.ClientTurnGeneration != nil {
		return dst, false
	}
	dst = jsonrpc.AppendString(append(dst, `{"session_id":`...), u.SessionID)
	dst = jsonrpc.AppendString(append(dst, `,"type":`...), u.Type)
	if u.Text != "" {
		dst = jsonrpc.AppendString(append(dst, `,"text":`...), u.Text)
	}
	return append(dst, '}'), true
}
