package rpc

import (
	"regexp"
	"strings"
)

// absPath is an absolute path standing as a word of a message (not the path part of a URL: "//host" follows
// a ':' and "/api" follows the host, neither of which starts a word here).
var absPath = regexp.MustCompile(`(^|[\s(=\[<'"])(/[^\s'"(),;\]>]*)`)

// pathRedactor returns a function writing each root (path, label) of roots as its label, nested roots listed
// innermost first, and any other absolute path as <path>: the install's file system is the owner's, and a
// restricted device or user learns nothing of it from a message.
func pathRedactor(roots ...[2]string) func(string) string {
	var pairs []string
	for _, kv := range roots {
		if kv[0] != "" && kv[0] != "/" {
			pairs = append(pairs, kv[0], kv[1])
		}
	}
	rep := strings.NewReplacer(pairs...) // at one position the first listed root wins
	return func(s string) string {
		return absPath.ReplaceAllString(rep.Replace(s), "${1}<path>")
	}
}
