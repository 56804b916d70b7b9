package dashboard

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/config"
)

// Running keeps the sessions of a session/list result whose state is running: upstream's {sessions}.
func Running(res any) any {
	raw, err := json.Marshal(res)
	var list api.SessionListResult
	if err != nil || json.Unmarshal(raw, &list) != nil {
		return res
	}
	out := api.SessionListResult{Sessions: []api.SessionSummary{}}
	for _, s := range list.Sessions {
		if s.State == "running" {
			out.Sessions = append(out.Sessions, s)
		}
	}
	return out
}

// ProviderItems are upstream's PickerItem rows of providers.models: the provider families of config/catalog,
// badge "configured" where an alias exists.
func ProviderItems(cat api.CatalogResult, cfg *config.Config) []map[string]any {
	items := []map[string]any{}
	for _, p := range cat.ModelProviders {
		it := map[string]any{"key": p.Name, "label": p.DisplayName}
		if p.Local {
			it["description"] = "Local — no API key required"
		}
		if len(cfg.Providers.Models[p.Name]) > 0 {
			it["badge"] = "configured"
		}
		items = append(items, it)
	}
	return items
}

// KeyItems are upstream's PickerItem rows of any other map-keyed section: its entry keys.
func KeyItems(keys []string) []map[string]any {
	items := []map[string]any{}
	for _, k := range keys {
		items = append(items, map[string]any{"key": k, "label": k})
	}
	return items
}

// FileEntry is one entry of a directory listing (the gateway's FileTree.List).
type FileEntry struct {
	Name      string
	Dir       bool
	Size      int64
	Protected bool // kept by the install: rmdir refuses it
}

// Listing is upstream's BrowseResponse of a directory listing (cleaned "." is the tree itself).
func Listing(entries []FileEntry, cleaned string) map[string]any {
	if cleaned == "." {
		cleaned = ""
	}
	out := make([]map[string]any, 0, len(entries))
	for _, e := range entries {
		m := map[string]any{"name": e.Name, "kind": "file", "size": e.Size}
		if e.Dir {
			m = map[string]any{"name": e.Name, "kind": "dir"}
		}
		if e.Protected {
			m["protected"] = true
		}
		out = append(out, m)
	}
	return map[string]any{"path": cleaned, "entries": out}
}

// FileRead is upstream's AgentWorkspaceFileRead: UTF-8 text as it is, anything else base64.
func FileRead(path string, data []byte) map[string]any {
	text := utf8.Valid(data) && !strings.ContainsRune(string(data), 0)
	res := map[string]any{"path": path, "size": len(data), "is_text": text, "content": string(data), "encoding": "utf8"}
	if !text {
		res["content"], res["encoding"] = base64.StdEncoding.EncodeToString(data), "base64"
	}
	return res
}
