package jsonrpc

import (
	"bufio"
	"io"
	"testing"
)

func BenchmarkClassify(b *testing.B) {
	frame := []byte(`{"jsonrpc":"2.0","method":"session/prompt","params":{"session_id":"s-1","prompt":"hello there"},"id":42}`)
	b.ReportAllocs()
	for b.Loop() {
		if Classify(frame).Request == nil {
			b.Fatal("not a request")
		}
	}
}

func BenchmarkConnRoundTrip(b *testing.B) {
	server, client := socketPair(b)
	c := NewConn(NewStream(server), HandlerFunc(echo), Options{})
	errc := make(chan error, 1)
	go func() { errc <- c.Serve(b.Context()) }()
	defer func() { _ = client.Close(); <-errc }()
	br := bufio.NewReader(client)
	req := []byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"x":1}}` + "\n")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := client.Write(req); err != nil {
			b.Fatal(err)
		}
		if _, err := br.ReadSlice('\n'); err != nil && err != io.EOF {
			b.Fatal(err)
		}
	}
}
