package rpctest

import (
	"bufio"
	"net"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// The benchmarks compare a status round trip through the daemon with a raw NDJSON echo server over the same kind
// of socket, in the same run: go test -bench RoundTrip -run '^$' ./internal/rpctest/
//
//	BenchmarkRoundTrip/raw_echo         the floor: a line in, a line out, no JSON work
//	BenchmarkRoundTrip/daemon_status    the daemon's status method (target: within 2x of raw_echo)
//	BenchmarkRoundTrip64/...            the same with 64 concurrent clients

const statusReq = `{"jsonrpc":"2.0","method":"status","id":1}` + "\n"

// echoServer serves a raw NDJSON echo on a Unix socket: each line read is answered with a status-sized line.
func echoServer(b *testing.B) string {
	path := filepath.Join(ShortTempDir(b), "echo.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		b.Fatal(err)
	}
	reply := []byte(`{"jsonrpc":"2.0","id":1,"result":{"server_version":"0.8.6","protocol_version":1,"pid":1,"uptime_secs":0,"active_sessions":0,"session_ids":[],"config_dir":"/x","data_dir":"/x/data","local_ipc_endpoint":"/x/data/daemon.sock"}}` + "\n")
	var wg sync.WaitGroup
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					if _, err := r.ReadSlice('\n'); err != nil {
						return
					}
					if _, err := c.Write(reply); err != nil {
						return
					}
				}
			}()
		}
	}()
	b.Cleanup(func() { ln.Close(); wg.Wait() })
	return path
}

type benchConn struct {
	c      net.Conn
	r      *bufio.Reader
	binary bool // uploads send binary chunks (the connection enabled them)
}

func benchDial(b *testing.B, path string, initialize bool) *benchConn {
	c, err := net.Dial("unix", path)
	if err != nil {
		b.Fatal(err)
	}
	bc := &benchConn{c: c, r: bufio.NewReader(c)}
	if initialize {
		bc.roundTrip(b, `{"jsonrpc":"2.0","method":"initialize","params":{"protocol_version":1},"id":0}`+"\n")
	}
	return bc
}

func (bc *benchConn) roundTrip(b *testing.B, req string) {
	if _, err := bc.c.Write([]byte(req)); err != nil {
		b.Fatal(err)
	}
	if _, err := bc.r.ReadSlice('\n'); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkRoundTrip(b *testing.B) {
	b.Run("raw_echo", func(b *testing.B) {
		bc := benchDial(b, echoServer(b), false)
		defer bc.c.Close()
		b.ResetTimer()
		for b.Loop() {
			bc.roundTrip(b, statusReq)
		}
	})
	b.Run("daemon_status", func(b *testing.B) {
		d := Start(b)
		bc := benchDial(b, d.Endpoint, true)
		defer bc.c.Close()
		b.ResetTimer()
		for b.Loop() {
			bc.roundTrip(b, statusReq)
		}
	})
}

func BenchmarkRoundTrip64(b *testing.B) {
	run := func(b *testing.B, path string, initialize bool) {
		// 64 client goroutines whatever GOMAXPROCS is.
		b.SetParallelism((64 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			bc := benchDial(b, path, initialize)
			defer bc.c.Close()
			for pb.Next() {
				bc.roundTrip(b, statusReq)
			}
		})
	}
	b.Run("raw_echo", func(b *testing.B) { run(b, echoServer(b), false) })
	b.Run("daemon_status", func(b *testing.B) {
		d := Start(b, withRPC("max_local_connections = 512\n"))
		run(b, d.Endpoint, true)
	})
}
