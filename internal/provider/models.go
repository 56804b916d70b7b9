package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"
)

// ErrModelList is a model listing that failed: no answer, an error status, an answer too large or not a list.
var ErrModelList = errors.New("provider: model listing failed")

// Bounds of a model listing: a provider that answers more is refused, not read on.
const (
	MaxModelsBytes = 4 << 20
	MaxModels      = 10000
	modelsTimeout  = 15 * time.Second
)

// ListModels asks the backend s names which models it offers: GET <uri>/models for OpenAI-compatible servers,
// <uri>/api/tags for Ollama, <uri>/v1/models for Anthropic; echo offers "echo". The answer is bounded in time,
// bytes and count, and the names are returned sorted and de-duplicated. The API key is sent as the family
// sends it on a turn, never in a URL.
func ListModels(ctx context.Context, c *http.Client, s Settings) ([]string, error) {
	c = sameOrigin(c)
	base := strings.TrimRight(s.URI, "/")
	var url string
	headers := map[string]string{}
	switch s.Family {
	case "echo":
		return []string{"echo"}, nil
	case "openai":
		url = cmpOr(base, DefaultOpenAIURI) + "/models"
		if s.APIKey != "" {
			headers["Authorization"] = "Bearer " + s.APIKey
		}
	case "ollama":
		url = cmpOr(base, DefaultOllamaURI) + "/api/tags"
	case "anthropic":
		url = cmpOr(base, DefaultAnthropicURI) + "/v1/models"
		headers["x-api-key"] = s.APIKey
		headers["anthropic-version"] = "2023-06-01"
	default:
		return nil, fmt.Errorf("provider: no model listing for family %q", s.Family)
	}
	for k, v := range s.ExtraHeaders {
		headers[k] = v
	}
	ctx, cancel := context.WithTimeout(ctx, modelsTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrModelList, err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrModelList, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxModelsBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrModelList, err)
	}
	if len(body) > MaxModelsBytes {
		return nil, fmt.Errorf("%w: the answer is larger than %d bytes", ErrModelList, MaxModelsBytes)
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%w: %s answered HTTP %d", ErrModelList, redactURL(url), resp.StatusCode)
	}
	var doc struct {
		Data   []struct{ ID string }   `json:"data"`
		Models []struct{ Name string } `json:"models"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("%w: not a model list: %w", ErrModelList, err)
	}
	seen := map[string]bool{}
	var out []string
	add := func(n string) {
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, d := range doc.Data {
		add(d.ID)
	}
	for _, m := range doc.Models {
		add(m.Name)
	}
	if len(out) > MaxModels {
		return nil, fmt.Errorf("%w: more than %d models", ErrModelList, MaxModels)
	}
	sort.Strings(out)
	return out, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// redactURL drops the user info and query of a URL shown in an error.
func redactURL(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	if at := strings.Index(u, "@"); at >= 0 {
		if s := strings.Index(u, "://"); s >= 0 && s < at {
			u = u[:s+3] + u[at+1:]
		}
	}
	return u
}
