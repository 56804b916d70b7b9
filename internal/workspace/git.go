package workspace

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// GitHead reports the git branch and short HEAD hash of the repository dir is in: dir or the nearest directory
// above it with a .git (upstream's session/git_branch). It reads git's files and never runs git. Outside a
// repository both are empty; see gitHead for the details.
func GitHead(dir string) (branch, hash string) { return gitHead(dir) }

// shortHashLen is how many hex digits of a commit hash are reported.
const shortHashLen = 7

// gitHead returns the branch HEAD names (refs/heads/, refs/tags/ or refs/remotes/ removed) and the short hash
// of the commit it resolves to. A detached HEAD has a hash and no branch; a branch without commits has no hash.
func gitHead(start string) (branch, hash string) {
	gitDir := findGitDir(start)
	if gitDir == "" {
		return "", ""
	}
	head, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return "", ""
	}
	line := strings.TrimSpace(string(head))
	if ref, ok := strings.CutPrefix(line, "ref: "); ok {
		name := ref
		for _, p := range []string{"refs/heads/", "refs/tags/", "refs/remotes/"} {
			if n, ok := strings.CutPrefix(ref, p); ok {
				name = n
				break
			}
		}
		if !printable(name) {
			return "", ""
		}
		return name, resolveRef(gitDir, ref)
	}
	return "", shortHash(line)
}

// findGitDir returns the git directory of the repository containing start: a .git directory, or the one a
// .git file (a linked worktree, a submodule) points to. "" when there is none.
func findGitDir(start string) string {
	for dir := filepath.Clean(start); ; dir = filepath.Dir(dir) {
		dotGit := filepath.Join(dir, ".git")
		if st, err := os.Stat(dotGit); err == nil {
			if st.IsDir() {
				return dotGit
			}
			b, err := os.ReadFile(dotGit)
			if err != nil {
				return ""
			}
			for l := range strings.Lines(string(b)) {
				if p, ok := strings.CutPrefix(strings.TrimSpace(l), "gitdir: "); ok {
					if !filepath.IsAbs(p) {
						p = filepath.Join(dir, p)
					}
					return p
				}
			}
			return ""
		}
		if filepath.Dir(dir) == dir {
			return ""
		}
	}
}

// resolveRef returns the short hash ref points to: a loose ref file, else packed-refs, both in the common git
// directory (a linked worktree's commondir).
func resolveRef(gitDir, ref string) string {
	common := gitDir
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		p := strings.TrimSpace(string(b))
		if !filepath.IsAbs(p) {
			p = filepath.Join(gitDir, p)
		}
		common = p
	}
	if !filepath.IsLocal(ref) {
		return ""
	}
	if b, err := os.ReadFile(filepath.Join(common, ref)); err == nil {
		return shortHash(strings.TrimSpace(string(b)))
	}
	packed, err := os.ReadFile(filepath.Join(common, "packed-refs"))
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(packed))
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "#") || strings.HasPrefix(l, "^") {
			continue
		}
		if sha, name, ok := strings.Cut(l, " "); ok && strings.TrimSpace(name) == ref {
			return shortHash(sha)
		}
	}
	return ""
}

func shortHash(sha string) string {
	if len(sha) < shortHashLen {
		return ""
	}
	for _, c := range sha {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return ""
		}
	}
	return sha[:shortHashLen]
}

func printable(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}
