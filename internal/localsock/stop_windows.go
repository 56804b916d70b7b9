//go:build windows

package localsock

// StopAccepting closes the pipe listener so that no new connection is accepted. On Windows the pipe name goes
// away with its last handle, so there is nothing left for Close to remove.
func (l *Listener) StopAccepting() error {
	err := l.pl.Close()
	if isClosedErr(err) {
		return nil
	}
	return err
}
