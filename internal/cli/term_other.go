//go:build !unix

package cli

import "os"

// terminalWidth is unknown here: only COLUMNS bounds a table.
func terminalWidth(*os.File) int { return 0 }
