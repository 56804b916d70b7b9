package upload

import (
	"encoding/base64"
	"encoding/binary"
)

// The decoding tables of decodeB64: each maps a base64 character to its 6 bits already shifted to their place in
// a 24-bit group, and every other byte to b64Bad, so one OR of four lookups is a decoded group or carries the
// flag.
var b64d0, b64d1, b64d2, b64d3 [256]uint32

const b64Bad = 1 << 31

func init() {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := range 256 {
		b64d0[i], b64d1[i], b64d2[i], b64d3[i] = b64Bad, b64Bad, b64Bad, b64Bad
	}
	for v, c := range []byte(alphabet) {
		b64d0[c] = uint32(v) << 18
		b64d1[c] = uint32(v) << 12
		b64d2[c] = uint32(v) << 6
		b64d3[c] = uint32(v)
	}
}

// decodeB64 decodes padded standard base64 src into dst exactly as base64.StdEncoding.Decode does (same bytes,
// same count, an error on the same inputs), for a src whose length is a multiple of 4 and a dst of its decoded
// length. It is about twice as fast on the body of a chunk: the groups before the last are decoded by table
// lookups, 16 characters at a time, with one validity check per run instead of one per character; the last group
// (which may hold padding) and any input the tables refuse go to the standard decoder, which then gives the
// verdict.
func decodeB64(dst, src []byte) (int, error) {
	if len(src) < 8 {
		return base64.StdEncoding.Decode(dst, src)
	}
	body := src[:len(src)-4]
	if !decodeGroups(dst, body) {
		return base64.StdEncoding.Decode(dst, src)
	}
	at := len(body) / 4 * 3
	m, err := base64.StdEncoding.Decode(dst[at:], src[len(body):])
	if err != nil {
		if ce, ok := err.(base64.CorruptInputError); ok {
			err = ce + base64.CorruptInputError(len(body))
		}
		return at + m, err
	}
	return at + m, nil
}

// DecodeBase64 is the decoder chunks go through (decodeB64), for benchmarks that measure it: src's length must be
// a multiple of 4 and dst hold its decoded length.
func DecodeBase64(dst, src []byte) (int, error) { return decodeB64(dst, src) }

// decodeGroups decodes src, whole groups of 4 characters without padding, into dst (at least len(src)/4*3
// bytes) and reports whether every character was in the alphabet; dst holds garbage when it was not.
func decodeGroups(dst, src []byte) bool {
	var acc uint32
	for len(src) >= 16 && len(dst) >= 12 {
		a := b64d0[src[0]] | b64d1[src[1]] | b64d2[src[2]] | b64d3[src[3]]
		b := b64d0[src[4]] | b64d1[src[5]] | b64d2[src[6]] | b64d3[src[7]]
		c := b64d0[src[8]] | b64d1[src[9]] | b64d2[src[10]] | b64d3[src[11]]
		d := b64d0[src[12]] | b64d1[src[13]] | b64d2[src[14]] | b64d3[src[15]]
		acc |= a | b | c | d
		binary.BigEndian.PutUint64(dst, uint64(a)<<40|uint64(b)<<16|uint64(c)>>8)
		binary.BigEndian.PutUint32(dst[8:], c<<24|d)
		src, dst = src[16:], dst[12:]
	}
	for len(src) >= 4 && len(dst) >= 3 {
		a := b64d0[src[0]] | b64d1[src[1]] | b64d2[src[2]] | b64d3[src[3]]
		acc |= a
		dst[0], dst[1], dst[2] = byte(a>>16), byte(a>>8), byte(a)
		src, dst = src[4:], dst[3:]
	}
	return acc&b64Bad == 0 && len(src) == 0
}
