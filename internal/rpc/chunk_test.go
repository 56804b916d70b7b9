package rpc

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/errmap"
	"github.com/zeroclaw-go/zeroclaw/internal/jsonrpc"
	"github.com/zeroclaw-go/zeroclaw/internal/upload"
)

// chunkRun applies a sequence of file/upload/chunk params (ID stands for the upload's id) to a fresh upload of
// size bytes, through the fast path or only the generic decoder, and returns each outcome as the client would
// see it: the result, or the wire error's code and message.
func chunkRun(t testing.TB, size int64, seq []string, valid, generic bool) []string {
	st := upload.NewBudget(upload.Options{}).NewStaging()
	defer st.Close()
	id, err := st.Begin(upload.BeginRequest{SizeBytes: size}, func() (upload.Binding, error) { return upload.Binding{}, nil })
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, params := range seq {
		raw := json.RawMessage(strings.ReplaceAll(params, "ID", `"`+id+`"`))
		res, err := serveChunk(func() *upload.Staging { return st }, raw, valid, generic, func() error { return nil })
		if err == nil {
			out = append(out, fmt.Sprintf("received %d", res.ReceivedBytes))
			continue
		}
		var we *jsonrpc.Error
		if !errors.As(err, &we) {
			we = errmap.RPC(err)
		}
		if we == nil {
			t.Fatalf("%.80s: unmapped error %v", params, err)
		}
		out = append(out, fmt.Sprintf("%d %s", we.Code, strings.ReplaceAll(we.Message, id, "ID")))
	}
	return out
}

func b64(n int, seed byte) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) + seed
	}
	return base64.StdEncoding.EncodeToString(b)
}

// The fast path of file/upload/chunk (the base64 taken from the frame) and the generic decoder accept and refuse
// the same params with the same errors, step by step through an upload; the fast path is taken where it should be.
func TestChunkFastPathMatchesGeneric(t *testing.T) {
	full := b64(api.UploadChunkBytes, 1)
	hello := base64.StdEncoding.EncodeToString([]byte("hello")) // aGVsbG8=
	const size = api.UploadChunkBytes + 10
	cases := []struct {
		name string
		seq  []string
		fast bool // the first params take the fast path
	}{
		{"plain", []string{`{"upload_id":ID,"offset":0,"data_b64":"` + full + `"}`, `{"upload_id":ID,"offset":1048576,"data_b64":"` + b64(10, 2) + `"}`}, true},
		{"whitespace", []string{" {\n\t\"upload_id\" : ID ,\r\n \"offset\" :0, \"data_b64\"\t:\t\"" + hello + "\"\n} "}, true},
		{"data first", []string{`{"data_b64":"` + hello + `","offset":0,"upload_id":ID}`}, true},
		{"unknown fields", []string{`{"upload_id":ID,"x":{"data_b64":"!"},"offset":0,"data_b64":"` + hello + `","y":[1,"\\"]}`}, true},
		{"escaped base64", []string{`{"upload_id":ID,"offset":0,"data_b64":"aGVs\u0062G8="}`}, false},
		{"escaped slash", []string{`{"upload_id":ID,"offset":0,"data_b64":"` + b64(3, 0x3f) + `\/\/\/\/"}`}, false},
		{"escaped newline", []string{`{"upload_id":ID,"offset":0,"data_b64":"aGVs\nbG8="}`}, false},
		{"escaped key", []string{`{"upload_id":ID,"offset":0,"data_b\u0036\u0034":"` + hello + `"}`}, false},
		{"camelCase key", []string{`{"upload_id":ID,"offset":0,"dataB64":"` + hello + `"}`}, false},
		{"camelCase conflict", []string{`{"upload_id":ID,"offset":0,"data_b64":"` + hello + `","dataB64":"aGk="}`}, false},
		{"duplicate same", []string{`{"upload_id":ID,"offset":0,"data_b64":"` + hello + `","data_b64":"` + hello + `"}`}, false},
		{"duplicate different", []string{`{"upload_id":ID,"offset":0,"data_b64":"` + hello + `","data_b64":"aGk="}`}, false},
		{"missing", []string{`{"upload_id":ID,"offset":0}`}, false},
		{"empty", []string{`{"upload_id":ID,"offset":0,"data_b64":""}`}, true},
		{"not a string", []string{`{"upload_id":ID,"offset":0,"data_b64":5}`}, false},
		{"null", []string{`{"upload_id":ID,"offset":0,"data_b64":null}`}, false},
		{"invalid alphabet", []string{`{"upload_id":ID,"offset":0,"data_b64":"aGVs*G8="}`}, true},
		{"space inside", []string{`{"upload_id":ID,"offset":0,"data_b64":"aGVs bG8="}`}, true},
		{"unpadded", []string{`{"upload_id":ID,"offset":0,"data_b64":"aGVsbG8"}`}, true},
		{"padding inside", []string{`{"upload_id":ID,"offset":0,"data_b64":"aGk=aGVsbG8="}`}, true},
		{"non-ASCII", []string{`{"upload_id":ID,"offset":0,"data_b64":"aGVsbG8é"}`}, true},
		{"invalid UTF-8", []string{"{\"upload_id\":ID,\"offset\":0,\"data_b64\":\"aGVs\xffbG8=\"}"}, true},
		{"oversized", []string{`{"upload_id":ID,"offset":0,"data_b64":"` + b64(api.UploadChunkBytes+1, 3) + `"}`}, true},
		{"past size", []string{`{"upload_id":ID,"offset":0,"data_b64":"` + full + `"}`, `{"upload_id":ID,"offset":1048576,"data_b64":"` + b64(11, 2) + `"}`}, true},
		{"offset missing", []string{`{"upload_id":ID,"data_b64":"` + hello + `"}`}, true},
		{"offset string", []string{`{"upload_id":ID,"offset":"0","data_b64":"` + hello + `"}`}, true},
		{"offset negative", []string{`{"upload_id":ID,"offset":-1,"data_b64":"` + hello + `"}`}, true},
		{"gap", []string{`{"upload_id":ID,"offset":5,"data_b64":"` + hello + `"}`}, true},
		{"resend and overlap", []string{`{"upload_id":ID,"offset":0,"data_b64":"` + hello + `"}`, `{"upload_id":ID,"offset":0,"data_b64":"` + hello + `"}`, `{"upload_id":ID,"offset":0,"data_b64":"aGk="}`}, true},
		{"unknown upload", []string{`{"upload_id":"0123","offset":0,"data_b64":"` + hello + `"}`}, true},
		{"upload_id number", []string{`{"upload_id":7,"offset":0,"data_b64":"` + hello + `"}`}, true},
		{"params array", []string{`["` + hello + `"]`}, false},
		{"no params", []string{``}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := strings.ReplaceAll(c.seq[0], "ID", `"0123456789abcdef0123456789abcdef"`)
			if _, fast := plainDataB64(json.RawMessage(raw), true); fast != c.fast {
				t.Fatalf("fast path taken: %v, want %v", fast, c.fast)
			}
			for _, valid := range []bool{true, false} {
				got, want := chunkRun(t, size, c.seq, valid, false), chunkRun(t, size, c.seq, valid, true)
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("valid=%v:\nfast path:    %.300q\ngeneric path: %.300q", valid, got, want)
				}
			}
		})
	}
}

// Any params, valid JSON or not, get the same outcome on both paths.
func FuzzChunkParams(f *testing.F) {
	for _, s := range []string{
		`{"upload_id":ID,"offset":0,"data_b64":"aGVsbG8="}`, `{"upload_id":ID,"offset":0,"data_b64":"aGVs\u0062G8="}`,
		`{"upload_id":ID,"offset":0,"dataB64":"aGk=","data_b64":"aGk="}`, `{"upload_id":ID,"offset":2,"data_b64":"aGk="}`,
		`{"upload_id":ID,"offset":0,"data_b64":"aGk=","data_b64":"aGk="}`, `{"offset":0,"data_b64":"aGVsbG8"}`,
		`{"upload_id":ID,"offset":0,"data_b64":"aGVs\xffbG8="}`, `{"upload_id":ID,"offset":0,"data_b64":"` + b64(300, 9) + `"}`,
		`{"upload_id":ID,"offset":0,"data_b64":"aGVsbG8=", "x":[{"data_b64":1}]}`, `{"upload_id":ID,"offset":0,"data_b64":"aGVsbG8="`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, params string) {
		seq := []string{params, params}
		valids := []bool{false}
		if json.Valid([]byte(strings.ReplaceAll(params, "ID", `"x"`))) {
			valids = append(valids, true)
		}
		for _, valid := range valids {
			got, want := chunkRun(t, 1000, seq, valid, false), chunkRun(t, 1000, seq, valid, true)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("%q valid=%v:\nfast path:    %q\ngeneric path: %q", params, valid, got, want)
			}
		}
	})
}
