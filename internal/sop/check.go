package sop

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Check is one finding of CheckPath: an Issue with its file and line, and whether it blocks (an error) or is a
// warning.
type Check struct {
	Issue
	Error bool
	SOP   string // the SOP directory's name
}

func (c Check) String() string {
	sev := "warning"
	if c.Error {
		sev = "error"
	}
	if c.Line > 0 {
		return c.File + ":" + itoa(c.Line) + ": " + sev + ": " + c.Message
	}
	return c.File + ": " + sev + ": " + c.Message
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for n >= 10 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	i--
	b[i] = byte('0' + n)
	return string(b[i:])
}

// CheckPath validates a SOP directory (one holding SOP.toml) or a directory of SOPs, as `zeroclaw sop
// validate DIR` does: every load problem and every Validate finding, each at the file and line it is about
// (a step's findings at its line in SOP.md, or its [[steps]] entry in SOP.toml). It reports how many SOPs it
// read; a path that holds neither is an error.
func CheckPath(path string, o LoadOptions) ([]Check, int, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	if !st.IsDir() {
		if filepath.Base(path) == ManifestFile || filepath.Base(path) == StepsFile {
			path = filepath.Dir(path)
		} else {
			return nil, 0, errors.New(path + " is not a directory")
		}
	}
	if _, err := os.Stat(filepath.Join(path, ManifestFile)); err == nil {
		return checkOne(filepath.Dir(path), filepath.Base(path), o), 1, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, 0, err
	}
	cat := LoadDir(path, o)
	var out []Check
	n := 0
	for _, d := range cat.Disabled {
		// checkOne below reports each plain SOP directory; what else failed (the directory itself, a refused
		// symlink) is reported as the loader saw it.
		lst, err := os.Lstat(d.Dir)
		if err == nil && lst.IsDir() && filepath.Dir(d.Dir) == filepath.Clean(path) {
			continue
		}
		out = append(out, Check{Issue: Issue{File: d.Dir, Message: d.Reason}, Error: true, SOP: filepath.Base(d.Dir)})
	}
	entries, _ := os.ReadDir(path)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), stagingPrefix) {
			continue
		}
		if _, err := os.Lstat(filepath.Join(path, e.Name(), ManifestFile)); err != nil {
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 {
			continue // reported above when it leads outside; a link inside is checked where it points
		}
		n++
		out = append(out, checkOne(path, e.Name(), o)...)
	}
	return out, n, nil
}

func checkOne(dir, name string, o LoadOptions) []Check {
	var out []Check
	s, warns, err := LoadOne(dir, name, o)
	for _, w := range warns {
		out = append(out, Check{Issue: w, SOP: name})
	}
	if err != nil {
		var le *LoadError
		if errors.As(err, &le) {
			for _, is := range le.Issues {
				out = append(out, Check{Issue: is, Error: true, SOP: name})
			}
		} else {
			out = append(out, Check{Issue: Issue{File: filepath.Join(dir, name), Message: err.Error()}, Error: true, SOP: name})
		}
		return out
	}
	tomlPath := filepath.Join(dir, name, ManifestFile)
	mdPath := filepath.Join(dir, name, StepsFile)
	md, mdErr := os.ReadFile(mdPath)
	manifest, _ := os.ReadFile(tomlPath)
	stepLine := func(n uint32) (string, int) {
		idx := -1
		for i, st := range s.Steps {
			if st.Number == n {
				idx = i
				break
			}
		}
		if idx < 0 {
			return tomlPath, 0
		}
		if mdErr == nil {
			return mdPath, stepLineInMD(string(md), idx)
		}
		return tomlPath, nthLine(manifest, "[[steps]]", idx)
	}
	for _, f := range Findings(s) {
		file, line := tomlPath, 0
		if f.Step > 0 {
			file, line = stepLine(f.Step)
		} else if strings.Contains(f.Message, "triggers") {
			line = lineOf(manifest, "[[triggers]]")
		} else if strings.Contains(f.Message, "steps") && mdErr == nil {
			file = mdPath
		} else {
			line = lineOf(manifest, "[sop]")
		}
		if line == 0 && file == tomlPath {
			line = lineOf(manifest, "[sop]")
		}
		out = append(out, Check{Issue: Issue{File: file, Line: line, Message: f.Message}, Error: f.Blocking, SOP: name})
	}
	if name != s.Name {
		out = append(out, Check{Issue: Issue{File: tomlPath, Line: lineOf(manifest, "name"), Message: "the SOP is named '" + s.Name +
			"' but its directory is '" + name + "': sops/get, run and delete find it by the directory name"}, SOP: name})
	}
	return out
}

// stepLineInMD is the line of the idx-th (0-based) step item of SOP.md's "## Steps" section.
func stepLineInMD(md string, idx int) int {
	n, seen, in := 0, 0, false
	for l := range strings.Lines(md) {
		n++
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "## ") {
			in = strings.EqualFold(t, "## steps")
			continue
		}
		if !in {
			continue
		}
		if _, ok := numberedItem(t); ok {
			if seen == idx {
				return n
			}
			seen++
		}
	}
	return 0
}
