package config

import (
	"reflect"
	"strconv"
	"strings"

	"github.com/zeroclaw-go/zeroclaw/internal/config/tomledit"
	"github.com/zeroclaw-go/zeroclaw/internal/secrets"
)

// MaskSecrets returns the TOML text raw with every secret value written as secrets.Masked: the schema's
// secret fields (state.md §3), and keys named like secrets in sections the schema does not know (kept as
// they are by a migration). Empty values and op:// references stay. Other bytes are untouched; it is for
// showing a file (config migrate --dry-run), never for writing one.
func MaskSecrets(file string, raw []byte) ([]byte, error) {
	d, err := tomledit.Parse(file, raw)
	if err != nil {
		return nil, err
	}
	mask := func(_ Path, s string) (string, error) {
		if s == "" || strings.HasPrefix(s, "op://") {
			return s, nil
		}
		return secrets.Masked, nil
	}
	out := raw
	for i := len(d.Leaves) - 1; i >= 0; i-- { // back to front: earlier offsets stay valid
		l := d.Leaves[i]
		r, err := resolve(l.Path)
		if err != nil || l.ArrayTable {
			if s, ok := l.Value.(string); ok && len(l.Path) > 0 && looksSecret(l.Path[len(l.Path)-1]) {
				if m, _ := mask(nil, s); m != s {
					out = tomledit.Splice(out, l.ValStart, l.ValEnd, strconv.Quote(m))
				}
			}
			continue
		}
		if !r.secret || !r.leaf {
			continue
		}
		v := reflect.New(r.typ).Elem()
		if err := coerce(v, l.Value); err != nil {
			continue
		}
		if err := walkSecrets(v, r.path, true, mask); err != nil {
			return nil, err
		}
		out = tomledit.Splice(out, l.ValStart, l.ValEnd, literal(v))
	}
	return out, nil
}

// looksSecret is isSecretName widened for keys outside the schema (upstream's channel blocks): also a bare
// token or secret, and a *_key such as encrypt_key or webhook_key.
func looksSecret(name string) bool {
	return isSecretName(name) || name == "token" || name == "secret" || strings.HasSuffix(name, "_key")
}
