package api

// Personality methods (upstream/rpc-methods.md, Skills, personality).
const (
	MethodPersonalityList      = "personality/list"
	MethodPersonalityGet       = "personality/get"
	MethodPersonalityPut       = "personality/put"
	MethodPersonalityTemplates = "personality/templates"
)

// PersonalityListParams is personality/list; without an agent every file is reported absent (upstream).
type PersonalityListParams struct {
	Agent string `json:"agent,omitempty"`
}

// PersonalityFileEntry is one editable file of personality/list.
type PersonalityFileEntry struct {
	Filename string `json:"filename"`
	Exists   bool   `json:"exists"`
	Size     int64  `json:"size"`
	MtimeMS  *int64 `json:"mtime_ms,omitempty"`
}

// PersonalityListResult is the result of personality/list.
type PersonalityListResult struct {
	Files    []PersonalityFileEntry `json:"files"`
	MaxChars int                    `json:"max_chars"`
}

// PersonalityGetParams is personality/get.
type PersonalityGetParams struct {
	Agent    string `json:"agent"`
	Filename string `json:"filename"`
}

// PersonalityGetResult is the result of personality/get: the whole file, with truncated set when it is longer
// than max_chars (the system prompt sees it cut).
type PersonalityGetResult struct {
	Filename  string  `json:"filename"`
	Content   *string `json:"content,omitempty"`
	Exists    bool    `json:"exists"`
	Truncated bool    `json:"truncated"`
	MtimeMS   *int64  `json:"mtime_ms,omitempty"`
}

// PersonalityPutParams is personality/put.
type PersonalityPutParams struct {
	Agent    string `json:"agent"`
	Filename string `json:"filename"`
	Content  string `json:"content"`
}

// PersonalityPutResult is the result of personality/put.
type PersonalityPutResult struct {
	BytesWritten int    `json:"bytes_written"`
	MtimeMS      *int64 `json:"mtime_ms,omitempty"`
}

// PersonalityTemplatesParams is personality/templates.
type PersonalityTemplatesParams struct {
	Agent string `json:"agent,omitempty"`
}

// PersonalityTemplate is one starter file of personality/templates.
type PersonalityTemplate struct {
	Filename string `json:"filename"`
	Content  string `json:"content"`
}

// PersonalityTemplatesResult is the result of personality/templates.
type PersonalityTemplatesResult struct {
	Preset string                `json:"preset"`
	Files  []PersonalityTemplate `json:"files"`
}
