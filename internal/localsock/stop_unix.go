//go:build unix

package localsock

// StopAccepting closes the listening socket so that no new connection is accepted, while keeping the socket file
// and <endpoint>.lock: shutdown removes them last (Close), after connections have drained. Accept then returns an
// error matching net.ErrClosed. Safe to call before Close, and more than once.
func (l *Listener) StopAccepting() error {
	err := l.ul.Close()
	if isClosedErr(err) {
		return nil
	}
	return err
}
