package chat

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/peterh/liner"

	"github.com/zeroclaw-go/zeroclaw/internal/atomicfile"
)

// errPromptInterrupted is Ctrl-C typed at a prompt of the line editor (the terminal sends no SIGINT then).
var errPromptInterrupted = errors.New("agent: Ctrl-C at the prompt")

// terminal is the chat's line editor when stdin and stdout are terminals: editing keys, Up/Down history kept in
// the install, Ctrl-R reverse search, Ctrl-C and Ctrl-D reported instead of ending the process. The editor
// reads one prompt at a time; mu serializes the chat prompt and the questions a turn asks, and a prompt left
// behind by a caller that stopped waiting (pending) is finished before the next one starts.
type terminal struct {
	st       *liner.State
	histPath string // "" keeps no history file

	mu      sync.Mutex    // mu guards pending
	pending chan struct{} // closed when the prompt a caller gave up on returns
}

// openTerminal puts the terminal in the editor's mode and loads the history. close restores the terminal.
func openTerminal(histPath string) *terminal {
	st := liner.NewLiner()
	st.SetCtrlCAborts(true)
	t := &terminal{st: st, histPath: histPath}
	if histPath != "" {
		if f, err := os.Open(histPath); err == nil {
			_, _ = st.ReadHistory(f)
			f.Close()
		}
	}
	return t
}

// prompt shows p and returns the line typed: io.EOF on Ctrl-D at an empty line, errPromptInterrupted on Ctrl-C,
// ctx's error when ctx ends first (the editor's read then finishes in the background, and its line is dropped).
// A remembered line goes into the history and the history file.
func (t *terminal) prompt(ctx context.Context, p string, remember bool) (string, error) {
	t.mu.Lock()
	pending := t.pending
	t.mu.Unlock()
	if pending != nil {
		select {
		case <-pending:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	type answer struct {
		line string
		err  error
	}
	done := make(chan answer, 1)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		line, err := t.st.Prompt(p)
		done <- answer{line, err}
	}()
	select {
	case a := <-done:
		if errors.Is(a.err, liner.ErrPromptAborted) {
			return "", errPromptInterrupted
		}
		if a.err != nil {
			return "", a.err
		}
		if remember {
			t.remember(a.line)
		}
		return a.line, nil
	case <-ctx.Done():
		t.mu.Lock()
		t.pending = finished
		t.mu.Unlock()
		return "", ctx.Err()
	}
}

// remember adds a line to the history and the history file.
func (t *terminal) remember(line string) {
	if strings.TrimSpace(line) == "" {
		return
	}
	t.st.AppendHistory(line)
	t.saveHistory()
}

// saveHistory rewrites the history file (0600) after each line, so a killed chat keeps what was typed.
func (t *terminal) saveHistory() {
	if t.histPath == "" {
		return
	}
	var b bytes.Buffer
	if _, err := t.st.WriteHistory(&b); err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(t.histPath), 0o700); err != nil {
		return
	}
	_ = atomicfile.WriteFile(t.histPath, b.Bytes(), 0o600)
}

func (t *terminal) close() { _ = t.st.Close() }

// lineReader hands stdin lines to whoever asks, one line to one reader, and lets a reader stop waiting when its
// ctx ends. Its pump goroutine ends at EOF or on close; a pump blocked inside a terminal read cannot be
// interrupted and ends with the process.
type lineReader struct {
	r     io.Reader
	once  sync.Once
	lines chan string   // closed by the pump after EOF or a read error
	done  chan struct{} // closed by close

	mu  sync.Mutex // mu guards err
	err error      // why lines was closed
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: r, lines: make(chan string), done: make(chan struct{})}
}

func (l *lineReader) pump() {
	defer close(l.lines)
	br := bufio.NewReader(l.r)
	for {
		s, err := br.ReadString('\n')
		if s != "" {
			select {
			case l.lines <- strings.TrimRight(s, "\r\n"):
			case <-l.done:
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				err = fmt.Errorf("agent: reading stdin: %w: %w", io.EOF, err)
			}
			l.mu.Lock()
			l.err = err
			l.mu.Unlock()
			return
		}
	}
}

// readLine returns the next line without its line ending; io.EOF (or an error wrapping it) once input ends; or
// ctx's error.
func (l *lineReader) readLine(ctx context.Context) (string, error) {
	if l.r == nil {
		return "", io.EOF
	}
	l.once.Do(func() { go l.pump() })
	select {
	case s, ok := <-l.lines:
		if ok {
			return s, nil
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		return "", l.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// close releases a pump waiting to hand over a line.
func (l *lineReader) close() {
	select {
	case <-l.done:
	default:
		close(l.done)
	}
}
