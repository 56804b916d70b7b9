package acp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
	"github.com/zeroclaw-go/zeroclaw/internal/upload"
)

// MaxBlobBytes bounds one embedded resource blob, decoded (acp.md): the bound of every attachment.
const MaxBlobBytes = api.MaxFileBytes

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
// resource is decoded (at most MaxBlobBytes) and stored under <workspace>/uploads/ by upload.SaveUnique (the
// attachment path of native prompts too), and the prompt names the file. Every block is checked, and every
// blob decoded, before any file is written, so a bad block leaves nothing behind. Images and audio are refused (promptCapabilities says so).
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
	type blob struct {
		index int
		name  string // the last element of its URI
		data  []byte
	}
	var uploads []blob
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
				uploads = append(uploads, blob{index: i, name: uriBase(b.Resource.URI), data: data})
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
	for _, u := range uploads {
		p, err := upload.SaveUnique(workspace, u.name, u.data)
		if err != nil {
			return "", fmt.Errorf("acp: %w", err)
		}
		written[u.index] = p
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

// uriBase is the last path element of a blob's URI, the client's name for it ("" when there is none);
// upload.SaveUnique makes it a safe file name.
func uriBase(uri string) string {
	if u, err := url.Parse(uri); err == nil && u.Path != "" {
		return path.Base(u.Path)
	} else if uri != "" {
		return path.Base(uri)
	}
	return ""
}
