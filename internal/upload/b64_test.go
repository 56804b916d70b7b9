package upload

import (
	"bytes"
	"encoding/base64"
	"testing"
)

// decodeB64 is base64.StdEncoding.Decode, faster: the same bytes, count and verdict on every input whose length
// is a multiple of 4 (what Chunk gives it).
func FuzzDecodeB64(f *testing.F) {
	for _, s := range []string{
		"", "QQ==", "QUI=", "QUJD", "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=", "QUJD\nREVG", "QUJD\r\nREVGR0g=",
		"QQ==QUJD", "QUJD====", "QUJ=QUJD", "!!!!QUJD", "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVpB\x00BCD",
		"QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVqA", "QR==", "QUJDREVGR0hJSktM\xff\xfeTU5P", "QUJDREVGR0hJSktMTU5P=QUJ",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		src = src[:len(src)/4*4]
		n := len(src) / 4 * 3
		want := make([]byte, n)
		wm, werr := base64.StdEncoding.Decode(want, src)
		got := make([]byte, n)
		gm, gerr := decodeB64(got, src)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%q: decodeB64 error %v, standard decoder %v", src, gerr, werr)
		}
		if werr == nil && (gm != wm || !bytes.Equal(got[:gm], want[:wm])) {
			t.Fatalf("%q: decodeB64 gave %d bytes %x, standard decoder %d bytes %x", src, gm, got[:gm], wm, want[:wm])
		}
	})
}

// A whole chunk round-trips, and one bad character anywhere in it is refused.
func TestDecodeB64Chunk(t *testing.T) {
	t.Parallel()
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(i*131 + i>>9)
	}
	for _, size := range []int{1 << 20, 1<<20 - 1, 1<<20 - 2, 17, 12, 5} {
		enc := []byte(base64.StdEncoding.EncodeToString(data[:size]))
		got := make([]byte, size)
		if m, err := decodeB64(got, enc); err != nil || m != size || !bytes.Equal(got, data[:size]) {
			t.Fatalf("size %d: decoded %d bytes, err %v, equal %v", size, m, err, bytes.Equal(got, data[:size]))
		}
		for _, at := range []int{0, len(enc) / 2, len(enc) - 5, len(enc) - 1} {
			bad := bytes.Clone(enc)
			bad[at] = '*'
			if _, err := decodeB64(got, bad); err == nil {
				t.Fatalf("size %d: a '*' at %d was accepted", size, at)
			}
		}
	}
}

func BenchmarkDecodeB64(b *testing.B) {
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(i*131 + i>>9)
	}
	enc := []byte(base64.StdEncoding.EncodeToString(data))
	dst := make([]byte, len(data))
	b.Run("std", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			_, _ = base64.StdEncoding.Decode(dst, enc)
		}
	})
	b.Run("decodeB64", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			_, _ = decodeB64(dst, enc)
		}
	})
}
