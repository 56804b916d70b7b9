package channel

import "strings"

// Continuation markers of a reply split over several messages (upstream's Telegram chunking).
const (
	markContinues = "\n\n(continues...)"
	markContinued = "(continued)\n\n"
)

// Split cuts text into messages of at most maxRunes code points each (0: one message), preferring a cut at a
// newline, then a space, in the second half of a chunk. Every chunk but the last ends with "(continues...)" and
// every chunk but the first starts with "(continued)", the markers counted within the limit. Empty text is one
// empty chunk.
func Split(text string, maxRunes int) []string {
	r := []rune(text)
	if maxRunes <= 0 || len(r) <= maxRunes {
		return []string{text}
	}
	head, tail := len([]rune(markContinued)), len([]rune(markContinues))
	if maxRunes < head+tail+16 { // a limit too small for markers: plain cuts
		var out []string
		for len(r) > 0 {
			n := min(maxRunes, len(r))
			out = append(out, string(r[:n]))
			r = r[n:]
		}
		return out
	}
	var out []string
	for first := true; len(r) > 0; first = false {
		room := maxRunes
		if !first {
			room -= head
		}
		if len(r) <= room {
			out = append(out, prefix(first)+string(r))
			break
		}
		room -= tail
		cut := room
		if i := lastIndex(r[:room], '\n'); i >= room/2 {
			cut = i + 1
		} else if i := lastIndex(r[:room], ' '); i >= room/2 {
			cut = i + 1
		}
		out = append(out, prefix(first)+strings.TrimRight(string(r[:cut]), " \n")+markContinues)
		r = r[cut:]
	}
	return out
}

func prefix(first bool) string {
	if first {
		return ""
	}
	return markContinued
}

func lastIndex(r []rune, c rune) int {
	for i := len(r) - 1; i >= 0; i-- {
		if r[i] == c {
			return i
		}
	}
	return -1
}
