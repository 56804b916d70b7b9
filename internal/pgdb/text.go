package pgdb

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Row is one result row: each column's text, nil for NULL.
type Row [][]byte

// String is column i's text ("" for NULL).
func (r Row) String(i int) string { return string(r[i]) }

// Null reports whether column i is NULL.
func (r Row) Null(i int) bool { return r[i] == nil }

// Int64 is column i as an integer.
func (r Row) Int64(i int) (int64, error) {
	n, err := strconv.ParseInt(string(r[i]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("pgdb: column %d: not an integer: %q", i+1, r[i])
	}
	return n, nil
}

// Bool is column i as a boolean (PostgreSQL prints t or f).
func (r Row) Bool(i int) bool { return string(r[i]) == "t" }

// Time is column i as a timestamptz (zero for NULL).
func (r Row) Time(i int) (time.Time, error) {
	if r[i] == nil {
		return time.Time{}, nil
	}
	return ParseTime(r[i])
}

// Params renders parameters in PostgreSQL's text input forms; nil is NULL.
func Params(args []any) ([][]byte, error) {
	out := make([][]byte, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case nil:
		case string:
			out[i] = []byte(v)
		case *string:
			if v != nil {
				out[i] = []byte(*v)
			}
		case []byte:
			// bytea in its hex input form.
			b := make([]byte, 2, 2+2*len(v))
			b[0], b[1] = '\\', 'x'
			const hex = "0123456789abcdef"
			for _, c := range v {
				b = append(b, hex[c>>4], hex[c&15])
			}
			out[i] = b
		case bool:
			if v {
				out[i] = []byte("t")
			} else {
				out[i] = []byte("f")
			}
		case int:
			out[i] = strconv.AppendInt(nil, int64(v), 10)
		case int64:
			out[i] = strconv.AppendInt(nil, v, 10)
		case float64:
			out[i] = strconv.AppendFloat(nil, v, 'g', -1, 64)
		case time.Time:
			out[i] = v.AppendFormat(nil, time.RFC3339Nano)
		case []string:
			out[i] = ArrayLiteral(v)
		default:
			return nil, fmt.Errorf("pgdb: parameter %d of type %T", i+1, a)
		}
	}
	return out, nil
}

// ArrayLiteral is a text[] in PostgreSQL's array input form, every element quoted.
func ArrayLiteral(ss []string) []byte {
	b := []byte{'{'}
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		for j := 0; j < len(s); j++ {
			if s[j] == '"' || s[j] == '\\' {
				b = append(b, '\\')
			}
			b = append(b, s[j])
		}
		b = append(b, '"')
	}
	return append(b, '}')
}

// ParseArray reads a one-dimensional text[] in PostgreSQL's array output form.
func ParseArray(v []byte) ([]string, error) {
	s := string(v)
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, fmt.Errorf("pgdb: not an array: %q", s)
	}
	s = s[1 : len(s)-1]
	out := []string{}
	for len(s) > 0 {
		var elem strings.Builder
		if s[0] == '"' {
			i := 1
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				elem.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("pgdb: unterminated array element in %q", v)
			}
			s = s[i+1:]
		} else {
			end := strings.IndexByte(s, ',')
			if end < 0 {
				end = len(s)
			}
			elem.WriteString(s[:end])
			s = s[end:]
		}
		out = append(out, elem.String())
		if len(s) > 0 {
			if s[0] != ',' {
				return nil, fmt.Errorf("pgdb: malformed array %q", v)
			}
			s = s[1:]
		}
	}
	return out, nil
}

// timeLayout reads timestamptz output with DateStyle ISO (ParseURL sets it, and TimeZone UTC).
const timeLayout = "2006-01-02 15:04:05.999999999Z07"

// ParseTime reads a timestamptz as the server prints it on a pool's connection.
func ParseTime(v []byte) (time.Time, error) {
	t, err := time.Parse(timeLayout, string(v))
	if err != nil {
		return time.Time{}, fmt.Errorf("pgdb: timestamp %q: %w", v, err)
	}
	return t, nil
}
