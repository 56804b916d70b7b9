package sop

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/atomicfile"
)

// stagingPrefix names the directory a create is assembled in before it is renamed into place; the loader
// skips such directories, so a crash mid-create leaves nothing that loads.
const stagingPrefix = ".sop-staging-"

// NormalizeNumbers renumbers steps 1..N in order and remaps next, depends_on, switch goto, on_failure goto
// and call bindings; a reference to a step that no longer exists is dropped (goto falls back to fail). It
// does nothing when numbers repeat, since a remap would guess, except that steps all numbered 0 (a client
// that sends none) are numbered by position first. Body text is reduced to what SOP.md keeps
// (lines trimmed, blank lines dropped).
func NormalizeNumbers(s *Sop) {
	for i := range s.Steps {
		s.Steps[i].Body = normalizeBody(s.Steps[i].Body)
	}
	unnumbered := true
	for _, st := range s.Steps {
		unnumbered = unnumbered && st.Number == 0
	}
	if unnumbered { // a client that sends no numbers (all 0) means the order it sends
		for i := range s.Steps {
			s.Steps[i].Number = uint32(i + 1)
		}
	}
	seen := map[uint32]bool{}
	for _, st := range s.Steps {
		if seen[st.Number] {
			return
		}
		seen[st.Number] = true
	}
	remap := map[uint32]uint32{}
	for i, st := range s.Steps {
		remap[st.Number] = uint32(i + 1)
	}
	re := func(p *uint32) *uint32 {
		if p == nil {
			return nil
		}
		if n, ok := remap[*p]; ok {
			return &n
		}
		return nil
	}
	for i := range s.Steps {
		st := &s.Steps[i]
		st.Number = uint32(i + 1)
		st.Routing.Next = re(st.Routing.Next)
		var deps []uint32
		for _, d := range st.Routing.DependsOn {
			if n, ok := remap[d]; ok {
				deps = append(deps, n)
			}
		}
		st.Routing.DependsOn = deps
		for j := range st.Routing.Switch {
			st.Routing.Switch[j].Goto = re(st.Routing.Switch[j].Goto)
		}
		if st.OnFailure.Action == FailGoto {
			if n, ok := remap[st.OnFailure.Step]; ok {
				st.OnFailure.Step = n
			} else {
				st.OnFailure = Failure{Action: FailRun}
			}
		}
		for j := range st.Calls {
			st.Calls[j].Args = remapStepRefs(st.Calls[j].Args, remap)
		}
	}
}

func normalizeBody(b string) string {
	var lines []string
	for l := range strings.Lines(b) {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// remapStepRefs rewrites {{steps.N...}} in the string leaves of args.
func remapStepRefs(args []byte, remap map[uint32]uint32) []byte {
	s := string(args)
	if !strings.Contains(s, "{{") {
		return args
	}
	var out strings.Builder
	rest := s
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			out.WriteString(rest)
			break
		}
		out.WriteString(rest[:i+2])
		after := rest[i+2:]
		end := strings.Index(after, "}}")
		if end < 0 {
			out.WriteString(after)
			break
		}
		b := parseBinding(strings.TrimSpace(after[:end]))
		if b.Reason == "" && !b.Calls {
			if n, ok := remap[b.Index]; ok && n != b.Index {
				inner := fmt.Sprintf("steps.%d", n)
				if b.Path != "" {
					inner += "." + b.Path
				}
				out.WriteString(inner)
				out.WriteString("}}")
				rest = after[end+2:]
				continue
			}
		}
		out.WriteString(after[:end+2])
		rest = after[end+2:]
	}
	return []byte(out.String())
}

// Rejected is a save refused by validation ("SOP rejected: a; b").
type Rejected struct{ Blocking []string }

func (r *Rejected) Error() string { return "SOP rejected: " + strings.Join(r.Blocking, "; ") }

// Unwrap makes a Rejected an ErrInvalid.
func (r *Rejected) Unwrap() error { return ErrInvalid }

// prepare renumbers s and validates it; the files to write come back only when nothing blocks.
func prepare(s Sop) (Sop, []byte, []byte, error) {
	if err := CheckName(s.Name); err != nil {
		return s, nil, nil, err
	}
	s.Steps = append([]Step(nil), s.Steps...)
	NormalizeNumbers(&s)
	if len(s.Steps) > MaxSteps {
		return s, nil, nil, errorf(ErrInvalid, "%d steps; at most %d are allowed", len(s.Steps), MaxSteps)
	}
	if len(s.Triggers) > MaxTriggers {
		return s, nil, nil, errorf(ErrInvalid, "%d triggers; at most %d are allowed", len(s.Triggers), MaxTriggers)
	}
	if v := Validate(s); !v.OK {
		return s, nil, nil, &Rejected{Blocking: v.Blocking}
	}
	if is := checkCapabilities(s, ManifestFile); len(is) > 0 {
		return s, nil, nil, &Rejected{Blocking: []string{is[0].Message}}
	}
	manifest, err := encodeManifest(s)
	if err != nil {
		return s, nil, nil, fmt.Errorf("sop: encode %s: %w", ManifestFile, err)
	}
	md := []byte(RenderSteps(s.Steps))
	if len(manifest) > MaxFileBytes || len(md) > MaxFileBytes {
		return s, nil, nil, errorf(ErrInvalid, "the SOP's files would be larger than %d bytes", MaxFileBytes)
	}
	return s, manifest, md, nil
}

// Save writes s to <dir>/<name>/ as SOP.toml and SOP.md (an upsert), after NormalizeNumbers and Validate; a
// blocking problem is a *Rejected and nothing is written. The two files change together: through the save
// journal (JournalFile), so a crash leaves the old SOP or the new one.
// Writes go through an os.Root at dir; a SOP directory that is a symlink is refused.
func Save(dir string, s Sop) (Sop, error) {
	filesMu.Lock()
	defer filesMu.Unlock()
	s, manifest, md, err := prepare(s)
	if err != nil {
		return s, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return s, fmt.Errorf("sop: create %s: %w", dir, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return s, fmt.Errorf("sop: open %s: %w", dir, err)
	}
	defer root.Close()
	switch st, err := root.Lstat(s.Name); {
	case errors.Is(err, fs.ErrNotExist):
		return s, createIn(root, s.Name, manifest, md)
	case err != nil:
		return s, fmt.Errorf("sop: %s: %w", s.Name, err)
	case !st.IsDir():
		return s, errorf(ErrInvalid, "%s exists and is not a directory (symlinks are refused)", filepath.Join(dir, s.Name))
	}
	if err := commitSave(root, s.Name, manifest, md); err != nil {
		return s, fmt.Errorf("sop: save %s: %w", s.Name, err)
	}
	return s, nil
}

// Create is Save refusing a SOP whose directory already exists (ErrAlreadyExists). The directory appears
// whole: it is assembled under a staging name and renamed into place.
func Create(dir string, s Sop) (Sop, error) {
	filesMu.Lock()
	defer filesMu.Unlock()
	s, manifest, md, err := prepare(s)
	if err != nil {
		return s, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return s, fmt.Errorf("sop: create %s: %w", dir, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return s, fmt.Errorf("sop: open %s: %w", dir, err)
	}
	defer root.Close()
	if _, err := root.Lstat(s.Name); err == nil {
		return s, errorf(ErrAlreadyExists, "SOP '%s' already exists", s.Name)
	}
	return s, createIn(root, s.Name, manifest, md)
}

func createIn(root *os.Root, name string, manifest, md []byte) error {
	var rb [8]byte
	_, _ = rand.Read(rb[:])
	stage := stagingPrefix + hex.EncodeToString(rb[:])
	if err := root.Mkdir(stage, 0o700); err != nil {
		return fmt.Errorf("sop: create staging directory: %w", err)
	}
	cleanup := func() { _ = root.RemoveAll(stage) }
	w := atomicfile.Options{FS: atomicfile.Root(root)}
	for _, f := range []struct {
		name string
		data []byte
	}{{StepsFile, md}, {ManifestFile, manifest}} {
		if err := w.WriteFile(filepath.Join(stage, f.name), f.data, 0o600); err != nil && !errors.Is(err, atomicfile.ErrNotDurable) {
			cleanup()
			return fmt.Errorf("sop: write %s: %w", f.name, err)
		}
	}
	if _, err := root.Lstat(name); err == nil {
		cleanup()
		return errorf(ErrAlreadyExists, "SOP '%s' already exists", name)
	}
	crashPoint(CrashCreateBeforePublic)
	if err := root.Rename(stage, name); err != nil {
		cleanup()
		if errors.Is(err, fs.ErrExist) || strings.Contains(err.Error(), "not empty") {
			return errorf(ErrAlreadyExists, "SOP '%s' already exists", name)
		}
		return fmt.Errorf("sop: publish %s: %w", name, err)
	}
	_ = atomicfile.Root(root).SyncDir(".")
	return nil
}

// Delete removes <dir>/<name> and everything in it. A missing SOP is ErrNotFound; the removal stays inside
// dir (a symlinked SOP directory is unlinked, its target untouched).
func Delete(dir, name string) error {
	filesMu.Lock()
	defer filesMu.Unlock()
	if err := CheckName(name); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return errorf(ErrNotFound, "SOP '%s' not found", name)
		}
		return fmt.Errorf("sop: open %s: %w", dir, err)
	}
	defer root.Close()
	st, err := root.Lstat(name)
	if err != nil {
		return errorf(ErrNotFound, "SOP '%s' not found", name)
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		err = root.Remove(name)
	} else {
		err = root.RemoveAll(name)
	}
	if err != nil {
		return fmt.Errorf("sop: delete %s: %w", name, err)
	}
	return nil
}
