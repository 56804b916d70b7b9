package install

import "os"

// openProbe opens an existing lock file read-only.
func openProbe(path string) (*os.File, error) { return os.Open(path) }
