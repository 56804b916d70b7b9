package deps

import (
	_ "github.com/Microsoft/go-winio"
	_ "github.com/coder/websocket"
	_ "github.com/pelletier/go-toml/v2"
	_ "github.com/pelletier/go-toml/v2/unstable"
	_ "golang.org/x/crypto/chacha20poly1305"
	_ "golang.org/x/sys/unix"
	_ "modernc.org/sqlite"
)
