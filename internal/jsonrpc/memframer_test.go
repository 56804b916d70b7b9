package jsonrpc

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// memFramer is a Framer that carries one message per frame in memory, with neither Deadlines nor HalfCloser:
// the shape of a WebSocket or stdio framer, and proof that Conn needs no socket.
type memFramer struct {
	in, out   *msgPipe      // client to server, server to client
	closed    chan struct{} // closed by Close
	closeOnce sync.Once
}

func newMemFramer() (*memFramer, *memEnd) {
	in, out := newMsgPipe(), newMsgPipe()
	return &memFramer{in: in, out: out, closed: make(chan struct{})}, &memEnd{in: in, out: out}
}

func (f *memFramer) ReadFrame(lim *FrameLimits) ([]byte, error) {
	m, err := f.in.recv(f.closed)
	if err != nil {
		return nil, err
	}
	if len(m) > lim.Max {
		return nil, ErrFrameTooLarge
	}
	if lim.Grow != nil {
		if err := lim.Grow(len(m)); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (f *memFramer) WriteFrame(frame []byte) (int, error) {
	if err := f.out.send(bytes.Clone(bytes.TrimSuffix(frame, []byte("\n"))), f.closed); err != nil {
		return 0, err
	}
	return len(frame), nil
}

func (f *memFramer) Close() error {
	f.closeOnce.Do(func() {
		close(f.closed)
		f.out.closeSend()
	})
	return nil
}

// msgPipe is one direction of the in-memory transport.
type msgPipe struct {
	ch       chan []byte
	sendDone chan struct{} // the sender closed: the receiver reads EOF after the queued messages
	recvGone chan struct{} // the receiver closed: sends fail
	sendOnce sync.Once
	goneOnce sync.Once
}

func newMsgPipe() *msgPipe {
	return &msgPipe{ch: make(chan []byte, 1024), sendDone: make(chan struct{}), recvGone: make(chan struct{})}
}

func (p *msgPipe) send(m []byte, abort <-chan struct{}) error {
	select {
	case <-p.recvGone:
		return io.ErrClosedPipe
	case <-abort:
		return net.ErrClosed
	default:
	}
	select {
	case p.ch <- m:
		return nil
	case <-p.recvGone:
		return io.ErrClosedPipe
	case <-abort:
		return net.ErrClosed
	}
}

func (p *msgPipe) recv(abort <-chan struct{}) ([]byte, error) {
	select {
	case m := <-p.ch:
		return m, nil
	case <-p.sendDone:
		select {
		case m := <-p.ch:
			return m, nil
		default:
			return nil, io.EOF
		}
	case <-abort:
		return nil, net.ErrClosed
	}
}

func (p *msgPipe) closeSend() { p.sendOnce.Do(func() { close(p.sendDone) }) }
func (p *msgPipe) closeRecv() { p.goneOnce.Do(func() { close(p.recvGone) }) }

// memEnd is the client end of a memFramer.
type memEnd struct {
	in, out *msgPipe
}

func (e *memEnd) write(s string) error {
	for line := range strings.SplitSeq(s, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if err := e.in.send([]byte(line), nil); err != nil {
			return err
		}
	}
	return nil
}

func (e *memEnd) readFrame() (string, error) {
	timeout := make(chan struct{})
	t := time.AfterFunc(safety, func() { close(timeout) })
	defer t.Stop()
	m, err := e.out.recv(timeout)
	if errors.Is(err, net.ErrClosed) {
		return "", errors.New("no frame within the safety bound")
	}
	return string(m), err
}

func (e *memEnd) closeWrite() error { e.in.closeSend(); return nil }

func (e *memEnd) close() error {
	e.in.closeSend()
	e.out.closeRecv()
	return nil
}
