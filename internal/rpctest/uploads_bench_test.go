package rpctest

import (
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/upload"
)

// BenchmarkUpload measures a 10 MB file through file/upload/begin, ten 1 MiB chunks and commit over the daemon's
// socket, each request waiting for its reply as a client does, and the file stored (fsynced) in the workspace;
// beside it, the same 10 MB written raw over the same kind of socket to a reader that discards them. Each
// iteration sends different bytes, so every commit writes. All report MiB/s and the CPU milliseconds the process
// (client and daemon) spent per 10 MB; the uploads also report their ratio to raw from the same run (target: at
// least 0.5). The _binary variants send binary chunks instead of data_b64:
//
//	go test -bench Upload -run '^$' ./internal/rpctest/
func BenchmarkUpload(b *testing.B) {
	const size = api.MaxFileBytes
	data := payload(size, 42)
	var rawMiBs float64

	b.Run("raw", func(b *testing.B) {
		path := sinkServer(b, size)
		c, err := net.Dial("unix", path)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		ack := make([]byte, 1)
		b.SetBytes(size)
		start, cpu := time.Now(), cpuTime()
		for b.Loop() {
			if _, err := c.Write(data); err != nil {
				b.Fatal(err)
			}
			if _, err := io.ReadFull(c, ack); err != nil {
				b.Fatal(err)
			}
		}
		rawMiBs = mibs(size, b.N, time.Since(start))
		b.ReportMetric(rawMiBs, "MiB/s")
		b.ReportMetric(cpuMsPerOp(cpu, b.N), "cpu-ms/op")
	})

	// codec_floor is the work no upload can skip, without any socket, JSON or disk: the client's base64 of the
	// file (encoding/base64, 1 MiB at a time as a client sends it), the daemon's decoding of it and the SHA-256
	// of the bytes, one after the other. Its ratio to raw bounds what an upload can reach on this machine.
	b.Run("codec_floor", func(b *testing.B) {
		enc := make([]byte, base64.StdEncoding.EncodedLen(api.UploadChunkBytes))
		dec := make([]byte, api.UploadChunkBytes)
		b.SetBytes(size)
		start, cpu := time.Now(), cpuTime()
		for b.Loop() {
			h := sha256.New()
			for off := 0; off < len(data); off += api.UploadChunkBytes {
				chunk := data[off:min(off+api.UploadChunkBytes, len(data))]
				n := base64.StdEncoding.EncodedLen(len(chunk))
				base64.StdEncoding.Encode(enc, chunk)
				m, err := upload.DecodeBase64(dec, enc[:n])
				if err != nil || m != len(chunk) {
					b.Fatal(m, err)
				}
				h.Write(dec[:m])
			}
			h.Sum(nil)
		}
		got := mibs(size, b.N, time.Since(start))
		b.ReportMetric(got, "MiB/s")
		b.ReportMetric(cpuMsPerOp(cpu, b.N), "cpu-ms/op")
		if rawMiBs > 0 {
			b.ReportMetric(got/rawMiBs, "x-raw")
		}
	})

	// upload stores every file (fsynced); upload_no_disk declares a wrong sha256 so the commit hashes and
	// discards the bytes: the same protocol work without the disk, whose fsync alone outweighs the raw transfer.
	// The _binary variants send binary chunks (data_len, then the raw bytes; negotiated in initialize).
	for _, v := range []struct {
		name          string
		store, binary bool
	}{{"upload", true, false}, {"upload_no_disk", false, false}, {"upload_binary", true, true}, {"upload_binary_no_disk", false, true}} {
		b.Run(v.name, func(b *testing.B) {
			d := Start(b)
			bc := benchDial(b, d.Endpoint, !v.binary)
			defer bc.c.Close()
			if v.binary {
				if r := bc.call(b, `{"jsonrpc":"2.0","method":"initialize","params":{"protocol_version":1,"clientCapabilities":{"binary_upload_chunks":true}},"id":0}`+"\n"); !strings.Contains(r, `"extensions":["binary_upload_chunks"]`) {
					b.Fatalf("initialize: %s", r)
				}
				bc.binary = true
			}
			bc.roundTrip(b, `{"jsonrpc":"2.0","method":"session/new","params":{"session_id":"bench"},"id":1}`+"\n")
			b.SetBytes(size)
			n := 0
			start, cpu := time.Now(), cpuTime()
			for b.Loop() {
				n++
				binary.LittleEndian.PutUint64(data, uint64(n)) // new content: the commit writes every time
				bc.upload(b, data, v.store)
			}
			got := mibs(size, b.N, time.Since(start))
			b.ReportMetric(got, "MiB/s")
			b.ReportMetric(cpuMsPerOp(cpu, b.N), "cpu-ms/op")
			if rawMiBs > 0 {
				b.ReportMetric(got/rawMiBs, "x-raw")
			}
		})
	}
}

// cpuTime is the CPU time (user and system) the process, client and daemon together, has used so far. Beside
// MiB/s, which a busy machine drags down, the CPU milliseconds per operation show the work an upload costs.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func cpuMsPerOp(since time.Duration, n int) float64 {
	return float64(cpuTime()-since) / float64(time.Millisecond) / float64(n)
}

func mibs(size, n int, d time.Duration) float64 {
	return float64(size) * float64(n) / (1 << 20) / d.Seconds()
}

// upload sends data as one upload and reads every reply, failing on an unexpected reply. Unless store, the
// upload declares a sha256 its bytes do not have, so the commit is refused without writing.
func (bc *benchConn) upload(b *testing.B, data []byte, store bool) {
	sum := ""
	if !store {
		sum = `,"sha256":"` + strings.Repeat("0", 64) + `"`
	}
	begin := fmt.Sprintf(`{"jsonrpc":"2.0","method":"file/upload/begin","params":{"session_id":"bench","size_bytes":%d,"filename":"bench.bin"%s},"id":2}`+"\n", len(data), sum)
	reply := bc.call(b, begin)
	const key = `"upload_id":"`
	i := strings.Index(reply, key)
	if i < 0 {
		b.Fatalf("begin: %s", reply)
	}
	id := reply[i+len(key) : i+len(key)+32]
	// Each chunk's frame is built as a client would, in one buffer: the request's head, the chunk encoded in
	// place (base64.AppendEncode), the tail; the buffer is reused and written as it is.
	line := make([]byte, 0, base64.StdEncoding.EncodedLen(api.UploadChunkBytes)+256)
	for off := 0; off < len(data); off += api.UploadChunkBytes {
		chunk := data[off:min(off+api.UploadChunkBytes, len(data))]
		if bc.binary {
			line = fmt.Appendf(line[:0], `{"jsonrpc":"2.0","method":"file/upload/chunk","params":{"upload_id":"%s","offset":%d,"data_len":%d},"id":3}`+"\n", id, off, len(chunk))
			bufs := net.Buffers{line, chunk}
			if _, err := bufs.WriteTo(bc.c); err != nil {
				b.Fatal(err)
			}
			if r := bc.reply(b); !strings.Contains(r, `"received_bytes"`) {
				b.Fatalf("chunk at %d: %s", off, r)
			}
			continue
		}
		line = fmt.Appendf(line[:0], `{"jsonrpc":"2.0","method":"file/upload/chunk","params":{"upload_id":"%s","offset":%d,"data_b64":"`, id, off)
		line = base64.StdEncoding.AppendEncode(line, chunk)
		line = append(line, `"},"id":3}`+"\n"...)
		if r := bc.callBytes(b, line); !strings.Contains(r, `"received_bytes"`) {
			b.Fatalf("chunk at %d: %s", off, r)
		}
	}
	want := `"ref_id"`
	if !store {
		want = "does not match"
	}
	if r := bc.call(b, `{"jsonrpc":"2.0","method":"file/upload/commit","params":{"upload_id":"`+id+`"},"id":4}`+"\n"); !strings.Contains(r, want) {
		b.Fatalf("commit: %s", r)
	}
}

// call writes one request line and returns the reply line.
func (bc *benchConn) call(b *testing.B, req string) string {
	if _, err := io.WriteString(bc.c, req); err != nil {
		b.Fatal(err)
	}
	return bc.reply(b)
}

// callBytes is call for a request line in a buffer (no copy into a string).
func (bc *benchConn) callBytes(b *testing.B, req []byte) string {
	if _, err := bc.c.Write(req); err != nil {
		b.Fatal(err)
	}
	return bc.reply(b)
}

// reply reads one reply line.
func (bc *benchConn) reply(b *testing.B) string {
	line, err := bc.r.ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	return line
}

// sinkServer accepts connections on a Unix socket and, on each, reads blocks of size bytes, discarding them and
// answering one byte per block.
func sinkServer(b *testing.B, size int) string {
	path := filepath.Join(ShortTempDir(b), "sink.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				r := bufio.NewReaderSize(c, 64<<10)
				for {
					if _, err := io.CopyN(io.Discard, r, int64(size)); err != nil {
						return
					}
					if _, err := c.Write([]byte{1}); err != nil {
						return
					}
				}
			})
		}
	})
	b.Cleanup(func() { ln.Close(); wg.Wait() })
	return path
}
