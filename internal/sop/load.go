package sop

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Bounds on what a SOP directory may make the daemon hold. A SOP past one is disabled with the reason.
const (
	MaxFileBytes = 256 << 10 // SOP.toml or SOP.md
	MaxSops      = 1024      // SOP directories read from one sops_dir
	MaxSteps     = 256       // steps of one SOP
	MaxTriggers  = 64        // triggers of one SOP
)

// File names inside a SOP directory.
const (
	ManifestFile = "SOP.toml"
	StepsFile    = "SOP.md"
)

// Sentinel errors; errmap maps them to wire codes.
var (
	ErrNotFound      = errors.New("sop: not found")
	ErrAlreadyExists = errors.New("sop: already exists")
	ErrInvalidName   = errors.New("sop: invalid name")
	ErrInvalid       = errors.New("sop: invalid")
)

// Error is a sentinel with the message a client is shown (upstream's wording, without the sentinel's text).
type Error struct {
	Kinds []error // the sentinels it matches, the one that decides its wire code first
	Msg   string
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the sentinels.
func (e *Error) Unwrap() []error { return e.Kinds }

func errorf(kind error, format string, a ...any) error {
	return &Error{Kinds: []error{kind}, Msg: fmt.Sprintf(format, a...)}
}

// DefaultDirRel is where SOPs live when [sop] sops_dir is unset, relative to the install root.
const DefaultDirRel = "shared/sops"

// ResolveDir is the SOPs directory: sopsDir ("~" expanded) joined to the install root when relative, as is
// when absolute, <install>/shared/sops when empty or blank.
func ResolveDir(installRoot, sopsDir, home string) string {
	d := strings.TrimSpace(sopsDir)
	if d == "" {
		return filepath.Join(installRoot, filepath.FromSlash(DefaultDirRel))
	}
	if d == "~" {
		d = home
	} else if rest, ok := strings.CutPrefix(d, "~/"); ok && home != "" {
		d = filepath.Join(home, rest)
	}
	if filepath.IsAbs(d) {
		return filepath.Clean(d)
	}
	return filepath.Join(installRoot, d)
}

// CheckName enforces upstream's name rule: one normal path component, no separator, NUL, "." or "..".
func CheckName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") ||
		filepath.IsAbs(name) || filepath.VolumeName(name) != "" {
		return errorf(ErrInvalidName, "invalid SOP name '%s': must be a single path component (no separators, '.', '..', or absolute paths)", name)
	}
	return nil
}

// Disabled is a SOP directory that did not load, with the reason (shown by sops/list's diagnostics, status
// and doctor). A broken SOP never stops the others or the daemon.
type Disabled struct {
	Dir    string  `json:"dir"`
	Reason string  `json:"reason"`
	Issues []Issue `json:"issues,omitempty"`
}

// Catalog is what one load of a sops_dir found: the SOPs sorted by name, the disabled ones, and the warnings
// of the loaded ones (unknown fields...).
type Catalog struct {
	Dir      string
	Sops     []Sop
	Disabled []Disabled
	Warnings []Issue
}

// Get returns the loaded SOP called name.
func (c *Catalog) Get(name string) (Sop, bool) {
	i := slices.IndexFunc(c.Sops, func(s Sop) bool { return s.Name == name })
	if i < 0 {
		return Sop{}, false
	}
	return c.Sops[i], true
}

// LoadOptions carry the [sop] settings loading needs.
type LoadOptions struct {
	// DefaultMode is [sop] default_execution_mode for a SOP that names none ("" = supervised).
	DefaultMode ExecutionMode
}

// LoadDir reads every <dir>/<name>/SOP.toml (subdirectories without one are skipped). A missing dir is an
// empty catalog. Files are opened through an os.Root at dir, so a symlink cannot lead outside it; files past
// MaxFileBytes, more than MaxSops directories, and SOPs past MaxSteps or MaxTriggers are disabled, not read.
func LoadDir(dir string, o LoadOptions) *Catalog {
	filesMu.RLock()
	defer filesMu.RUnlock()
	c := &Catalog{Dir: dir}
	root, err := os.OpenRoot(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.Disabled = append(c.Disabled, Disabled{Dir: dir, Reason: "cannot open the SOPs directory: " + err.Error()})
		}
		return c
	}
	defer root.Close()
	f, err := root.Open(".")
	if err != nil {
		c.Disabled = append(c.Disabled, Disabled{Dir: dir, Reason: err.Error()})
		return c
	}
	entries, err := f.ReadDir(MaxSops + 1)
	f.Close()
	if err != nil && !errors.Is(err, io.EOF) {
		c.Disabled = append(c.Disabled, Disabled{Dir: dir, Reason: err.Error()})
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	if len(entries) > MaxSops {
		c.Disabled = append(c.Disabled, Disabled{Dir: dir, Reason: fmt.Sprintf("more than %d entries; the rest are not read", MaxSops)})
		entries = entries[:MaxSops]
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), stagingPrefix) {
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 {
			// A linked SOP directory is followed only while it stays inside dir (os.Root refuses the rest).
			st, err := root.Stat(e.Name())
			if err != nil {
				c.Disabled = append(c.Disabled, Disabled{Dir: filepath.Join(dir, e.Name()), Reason: "symlink refused: " + err.Error()})
				continue
			}
			if !st.IsDir() {
				continue
			}
		} else if !e.IsDir() {
			continue
		}
		if _, err := root.Lstat(filepath.Join(e.Name(), ManifestFile)); err != nil {
			continue
		}
		s, warns, err := loadIn(root, dir, e.Name(), o)
		c.Warnings = append(c.Warnings, warns...)
		if err != nil {
			d := Disabled{Dir: filepath.Join(dir, e.Name()), Reason: err.Error()}
			var le *LoadError
			if errors.As(err, &le) {
				d.Issues = le.Issues
			}
			c.Disabled = append(c.Disabled, d)
			continue
		}
		c.Sops = append(c.Sops, s)
	}
	slices.SortStableFunc(c.Sops, func(a, b Sop) int { return strings.Compare(a.Name, b.Name) })
	return c
}

// LoadError is a SOP that failed to load, with its file:line issues.
type LoadError struct {
	Name   string
	Issues []Issue
}

func (e *LoadError) Error() string {
	parts := make([]string, len(e.Issues))
	for i, is := range e.Issues {
		parts[i] = is.String()
	}
	return strings.Join(parts, "; ")
}

// Unwrap makes a LoadError an ErrInvalid.
func (e *LoadError) Unwrap() error { return ErrInvalid }

// LoadOne loads <dir>/<name>. A missing directory or SOP.toml is ErrNotFound; a bad name ErrInvalidName; a
// broken SOP a *LoadError.
func LoadOne(dir, name string, o LoadOptions) (Sop, []Issue, error) {
	filesMu.RLock()
	defer filesMu.RUnlock()
	if err := CheckName(name); err != nil {
		return Sop{}, nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Sop{}, nil, errorf(ErrNotFound, "SOP '%s' not found", name)
		}
		return Sop{}, nil, err
	}
	defer root.Close()
	if _, err := root.Lstat(filepath.Join(name, ManifestFile)); err != nil {
		return Sop{}, nil, errorf(ErrNotFound, "SOP '%s' not found", name)
	}
	return loadIn(root, dir, name, o)
}

// filesMu orders this process's loads after its saves: a save (Save, Create, Delete, Recover) writes while
// no load reads, so a load never pairs one save's SOP.toml with another's SOP.md (the journal covers a
// crash, not a load running alongside a save).
var filesMu sync.RWMutex

// readBounded reads one file of a SOP through root, refusing a file past MaxFileBytes or one that is not a
// regular file. ok is false when the file does not exist.
func readBounded(root *os.Root, rel string) (data []byte, ok bool, err error) {
	return readBoundedN(root, rel, MaxFileBytes)
}

func readBoundedN(root *os.Root, rel string, limit int) (data []byte, ok bool, err error) {
	f, err := root.Open(rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil
		}
		return nil, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	if !st.Mode().IsRegular() {
		return nil, false, fmt.Errorf("not a regular file")
	}
	data, err = io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, false, err
	}
	if len(data) > limit {
		return nil, false, fmt.Errorf("larger than %d bytes", limit)
	}
	return data, true, nil
}

func loadIn(root *os.Root, dir, name string, o LoadOptions) (Sop, []Issue, error) {
	tomlRel := filepath.Join(name, ManifestFile)
	mdRel := filepath.Join(name, StepsFile)
	tomlPath := filepath.Join(dir, tomlRel)
	fail := func(is ...Issue) (Sop, []Issue, error) { return Sop{}, nil, &LoadError{Name: name, Issues: is} }
	j, journaled := readJournal(root, name)
	data, _, err := readBounded(root, tomlRel)
	if journaled { // a save cut short: the journal is the SOP until it is rolled forward
		data, err = []byte(j.TOML), nil
	}
	if err != nil {
		return fail(Issue{File: tomlPath, Message: err.Error()})
	}
	m, warns, bad := parseManifest(tomlPath, data)
	if bad != nil {
		return Sop{}, warns, &LoadError{Name: name, Issues: []Issue{*bad}}
	}
	s, problems := fromManifest(m, data, tomlPath, o)
	if len(problems) > 0 {
		return Sop{}, warns, &LoadError{Name: name, Issues: problems}
	}
	s.Location = filepath.Join(dir, name)
	md, hasMD, err := readBounded(root, mdRel)
	if journaled {
		md, hasMD, err = []byte(j.MD), j.MD != "", nil
	}
	if err != nil {
		return fail(Issue{File: filepath.Join(dir, mdRel), Message: err.Error()})
	}
	if hasMD {
		if line := invalidUTF8Line(md); line > 0 {
			// A step's text must reach clients as it is written: JSON would turn the bad bytes into U+FFFD.
			return fail(Issue{File: filepath.Join(dir, mdRel), Line: line, Message: "not valid UTF-8"})
		}
		s.Steps = ParseSteps(string(md))
	}
	for _, p := range m.Positions {
		for i := range s.Steps {
			if s.Steps[i].Number == p.Step {
				s.Steps[i].Pos = &Pos{X: p.X, Y: p.Y}
				break
			}
		}
	}
	if len(s.Steps) > MaxSteps {
		return fail(Issue{File: tomlPath, Message: fmt.Sprintf("%d steps; at most %d are allowed", len(s.Steps), MaxSteps)})
	}
	if is := checkCapabilities(s, tomlPath); len(is) > 0 {
		return Sop{}, warns, &LoadError{Name: name, Issues: is}
	}
	return s, warns, nil
}

// fromManifest builds the Sop of a decoded SOP.toml with upstream's defaults; problems are refused fields.
func fromManifest(m manifestTOML, data []byte, file string, o LoadOptions) (Sop, []Issue) {
	meta := m.Sop
	s := Sop{Name: *meta.Name, Description: *meta.Description, Version: "0.1.0", Priority: PriorityNormal,
		CooldownSecs: meta.CooldownSecs, MaxConcurrent: 1, Deterministic: meta.Deterministic,
		AdmissionPolicy: AdmitParallel, MaxPendingApprovals: meta.MaxPendingApprovals}
	if meta.Version != nil {
		s.Version = *meta.Version
	}
	if meta.Priority != nil {
		s.Priority = *meta.Priority
	}
	if meta.MaxConcurrent != nil {
		s.MaxConcurrent = *meta.MaxConcurrent
	}
	if meta.AdmissionPolicy != nil {
		s.AdmissionPolicy = *meta.AdmissionPolicy
	}
	if meta.Agent != nil {
		s.Agent = *meta.Agent
	}
	switch {
	case meta.Deterministic:
		s.ExecutionMode = ModeDeterministic
	case meta.ExecutionMode != nil:
		s.ExecutionMode = *meta.ExecutionMode
	case o.DefaultMode != "":
		s.ExecutionMode = o.DefaultMode
	default:
		s.ExecutionMode = ModeSupervised
	}
	var problems []Issue
	// go-toml assigns a string kind as is, so the enums are checked here, with the line of their key.
	enum := func(key string, u interface{ UnmarshalText([]byte) error }, v string) {
		if err := u.UnmarshalText([]byte(v)); err != nil {
			problems = append(problems, Issue{File: file, Line: lineOf(data, key), Message: err.Error()})
		}
	}
	enum("priority", new(Priority), string(s.Priority))
	enum("execution_mode", new(ExecutionMode), string(s.ExecutionMode))
	enum("admission_policy", new(AdmissionPolicy), string(s.AdmissionPolicy))
	if len(m.Triggers) > MaxTriggers {
		problems = append(problems, Issue{File: file, Message: fmt.Sprintf("%d triggers; at most %d are allowed", len(m.Triggers), MaxTriggers)})
		return s, problems
	}
	for i, tf := range m.Triggers {
		t, err := tf.toTrigger()
		for _, e := range t.Events {
			if err == nil {
				err = new(FSEvent).UnmarshalText([]byte(e))
			}
		}
		if err != nil {
			problems = append(problems, Issue{File: file, Line: nthLine(data, "[[triggers]]", i), Message: fmt.Sprintf("triggers[%d]: %v", i, err)})
			continue
		}
		s.Triggers = append(s.Triggers, t)
	}
	if len(m.Steps) > MaxSteps {
		problems = append(problems, Issue{File: file, Message: fmt.Sprintf("%d steps; at most %d are allowed", len(m.Steps), MaxSteps)})
		return s, problems
	}
	for i, st := range m.Steps {
		step, err := st.toStep()
		if err == nil {
			err = new(StepKind).UnmarshalText([]byte(step.Kind))
		}
		if err == nil && step.Mode != "" {
			err = new(ExecutionMode).UnmarshalText([]byte(step.Mode))
		}
		if err != nil {
			problems = append(problems, Issue{File: file, Line: nthLine(data, "[[steps]]", i), Message: fmt.Sprintf("steps[%d]: %v", i, err)})
			continue
		}
		if step.Number == 0 {
			step.Number = uint32(i + 1)
		}
		if step.Title == "" {
			step.Title = step.Capability
			if step.Title == "" {
				step.Title = string(step.Kind)
			}
		}
		s.Steps = append(s.Steps, step)
	}
	return s, problems
}

// Capabilities are the ids of upstream's built-in deterministic capabilities, which a kind=capability step
// must name.
var Capabilities = []string{"noop", "wait", "approval.wait", "json.validate", "shell.exec", "git.status",
	"git.diff", "notify.channel", "forge.comment", "llm.generate"}

func checkCapabilities(s Sop, file string) []Issue {
	var out []Issue
	for _, st := range s.Steps {
		if st.Kind != KindCapability {
			continue
		}
		switch {
		case st.Capability == "":
			out = append(out, Issue{File: file, Message: fmt.Sprintf("step %d is kind=capability but names no capability", st.Number)})
		case !slices.Contains(Capabilities, st.Capability):
			out = append(out, Issue{File: file, Message: fmt.Sprintf("step %d names unknown capability '%s' (known: %s)", st.Number, st.Capability, strings.Join(Capabilities, ", "))})
		}
	}
	return out
}

// invalidUTF8Line is the 1-based line of the first byte of b that is not UTF-8, or 0 when all of it is.
func invalidUTF8Line(b []byte) int {
	if utf8.Valid(b) {
		return 0
	}
	line := 1
	for len(b) > 0 {
		r, w := utf8.DecodeRune(b)
		if r == utf8.RuneError && w == 1 {
			return line
		}
		if r == '\n' {
			line++
		}
		b = b[w:]
	}
	return line
}
