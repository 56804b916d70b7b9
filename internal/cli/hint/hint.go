// Package hint is the error every zeroclaw command returns when it can say what to do next: cli.Run prints
// it as "Error: ..." then "Try: ...", and exits with its code. The command packages (cli, cli/chat) share it.
package hint

// Error is an error with a suggestion printed after it as "Try: ...".
type Error struct {
	Err  error
	Hint string
	Code int // process exit code; 0 means 1
	// Localize, when set, gives Hint in the words of a locale (a registry code such as "fr"); Hint is then
	// its English text.
	Localize func(locale string) string
}

// In is the hint in a locale's words: Localize's, else Hint as it is.
func (e *Error) In(locale string) string {
	if e.Localize != nil {
		return e.Localize(locale)
	}
	return e.Hint
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// With returns err with hint as its suggestion.
func With(err error, hint string) error { return &Error{Err: err, Hint: hint} }
