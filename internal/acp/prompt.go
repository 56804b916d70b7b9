package acp

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/atomicfile"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
)

// MaxBlobBytes bounds one embedded resource blob, decoded (acp.md).
const MaxBlobBytes = 10 << 20

// contentBlockIn is a prompt content block as a client sends it.
type contentBlockIn struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	URI      string `json:"uri"`  // resource_link
	Name     string `json:"name"` // resource_link
	Resource *struct {
		URI      string  `json:"uri"`
		MimeType string  `json:"mimeType"`
		Text     *string `json:"text"`
		Blob     *string `json:"blob"`
	} `json:"resource"`
}

// materializePrompt turns session/prompt's prompt (a string, or ACP content blocks) into the text of the turn.
// Text blocks and text resources are joined with blank lines; a resource_link becomes a reference line; a blob
// resource is decoded (at most MaxBlobBytes) and written under <workspace>/uploads/, and the prompt names the
// file. Every block is checked, and every blob decoded, before any file is written, so a bad block leaves
// nothing behind. Images and audio are refused (promptCapabilities says so).
func materializePrompt(raw json.RawMessage, workspace string) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", router.InvalidParams("invalid params: prompt is required (a string or an array of content blocks)")
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", router.InvalidParams("invalid params: prompt must be a string or an array of content blocks")
		}
		return s, nil
	}
	var blocks []contentBlockIn
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", router.InvalidParams("invalid params: prompt must be a string or an array of content blocks")
	}
	type upload struct {
		index      int
		name, mime string
		data       []byte
	}
	var uploads []upload
	for i, b := range blocks {
		switch b.Type {
		case "text", "resource_link":
		case "resource":
			if b.Resource == nil {
				return "", router.InvalidParams(fmt.Sprintf("invalid params: prompt[%d]: a resource block needs resource", i))
			}
			switch {
			case b.Resource.Blob != nil:
				data, err := decodeBlob(*b.Resource.Blob)
				if err != nil {
					return "", router.InvalidParams(fmt.Sprintf("invalid params: prompt[%d].resource.blob: %v", i, err))
				}
				uploads = append(uploads, upload{index: i, name: uploadName(b.Resource.URI), mime: b.Resource.MimeType, data: data})
			case b.Resource.Text == nil:
				return "", router.InvalidParams(fmt.Sprintf("invalid params: prompt[%d].resource needs text or blob", i))
			}
		case "image", "audio":
			return "", router.InvalidParams(fmt.Sprintf("invalid params: prompt[%d]: %s content is not supported", i, b.Type))
		default:
			return "", router.InvalidParams(fmt.Sprintf("invalid params: prompt[%d]: unknown content block type %q", i, b.Type))
		}
	}
	written := map[int]string{}
	if len(uploads) > 0 {
		dir := filepath.Join(workspace, "uploads")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", fmt.Errorf("acp: uploads: %w", err)
		}
		for _, u := range uploads {
			p := filepath.Join(dir, uniquePrefix()+"-"+u.name)
			if err := atomicfile.CreateNoClobber(p, u.data, 0o600); err != nil {
				return "", fmt.Errorf("acp: upload %s: %w", u.name, err)
			}
			written[u.index] = p
		}
	}
	var parts []string
	for i, b := range blocks {
		switch b.Type {
		case "text":
			if b.Text != "" {
				parts = append(parts, b.Text)
			}
		case "resource_link":
			ref := b.URI
			if b.Name != "" {
				ref = b.Name + " (" + b.URI + ")"
			}
			parts = append(parts, "[resource: "+ref+"]")
		case "resource":
			if p, ok := written[i]; ok {
				ref := "[attachment: " + p
				if m := blocks[i].Resource.MimeType; m != "" {
					ref += " (" + m + ")"
				}
				parts = append(parts, ref+"]")
			} else if t := *b.Resource.Text; t != "" {
				parts = append(parts, t)
			}
		}
	}
	text := strings.Join(parts, "\n\n")
	if strings.TrimSpace(text) == "" {
		return "", router.InvalidParams("invalid params: prompt has no text")
	}
	return text, nil
}

// decodeBlob decodes standard base64 (padded or not), refusing more than MaxBlobBytes decoded.
func decodeBlob(s string) ([]byte, error) {
	s = strings.TrimRight(strings.Join(strings.Fields(s), ""), "=")
	if base64.RawStdEncoding.DecodedLen(len(s)) > MaxBlobBytes {
		return nil, fmt.Errorf("larger than %d bytes decoded", MaxBlobBytes)
	}
	data, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("invalid base64: %v", err)
	}
	return data, nil
}

// uploadName is a safe file name for a blob from its URI's last path element ("upload" when there is none).
func uploadName(uri string) string {
	name := ""
	if u, err := url.Parse(uri); err == nil && u.Path != "" {
		name = path.Base(u.Path)
	} else if uri != "" {
		name = path.Base(uri)
	}
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name = strings.TrimLeft(b.String(), ".")
	if name == "" || name == "_" {
		name = "upload"
	}
	if len(name) > 100 {
		name = name[len(name)-100:]
	}
	return name
}

func uniquePrefix() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}
