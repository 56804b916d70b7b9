package config

import (
	"reflect"
	"slices"
)

// Drift is one property whose value in the running config differs from what config.toml says now (upstream's
// DriftEntry): the file was edited behind the daemon and not reloaded. A secret carries no values.
type Drift struct {
	Path     string
	Secret   bool
	InMemory any // the running value; nil when the running config has no such property (or it is a secret)
	OnDisk   any // the file's value; nil when the file has no such property (or it is a secret)
}

// Drift compares the running config with config.toml as it is on disk now, property by property, as upstream's
// compute_drift does: both read the same way (the environment applied, secrets decrypted, entries that fail
// validation disabled), and a property a ZEROCLAW_ variable sets is skipped (the file cannot change it). It
// returns the differing properties in path order, none after a write or a reload. A file that cannot be read
// or built is the error (its problems are what config/reload would report).
func (m *Manager) Drift() ([]Drift, error) {
	raw, err := m.readRaw(m.name)
	if err != nil {
		return nil, err
	}
	disk, err := buildLenient(m.name, raw, m.environ, m.box)
	if err != nil {
		return nil, err
	}
	return driftBetween(m.live.Load().st, disk), nil
}

// leaf is one property's value and whether it is a secret.
type leaf struct {
	v      reflect.Value
	secret bool
}

// driftBetween lists the properties of live and disk whose values differ, live's env-set ones left out.
func driftBetween(live, disk *state) []Drift {
	a, b := map[string]leaf{}, map[string]leaf{}
	leaves(reflect.ValueOf(live.cfg).Elem(), nil, false, a)
	leaves(reflect.ValueOf(disk.cfg).Elem(), nil, false, b)
	names := make([]string, 0, len(a)+len(b))
	for n := range a {
		names = append(names, n)
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var out []Drift
	for _, n := range names {
		if slices.Contains(live.envProps, n) {
			continue
		}
		x, inLive := a[n]
		y, inDisk := b[n]
		// A property only one side has is compared with the other's zero value: an entry added by hand
		// drifts on what it sets, not on the unset leaves it has as every entry does.
		if !inLive {
			x.v = reflect.Zero(y.v.Type())
		}
		if !inDisk {
			y.v = reflect.Zero(x.v.Type())
		}
		if sameValue(x.v, y.v) {
			continue
		}
		d := Drift{Path: n, Secret: x.secret || y.secret}
		if !d.Secret {
			if inLive {
				d.InMemory = view(x.v, false)
			}
			if inDisk {
				d.OnDisk = view(y.v, false)
			}
		}
		out = append(out, d)
	}
	return out
}

// sameValue compares two leaves, an empty list and an unset one being the same.
func sameValue(x, y reflect.Value) bool {
	if x.Kind() == reflect.Slice && x.Len() == 0 && y.Len() == 0 {
		return true
	}
	return reflect.DeepEqual(x.Interface(), y.Interface())
}

// leaves collects every leaf under v (at p) by its property path.
func leaves(v reflect.Value, p Path, secret bool, out map[string]leaf) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			name := tagName(v.Type().Field(i))
			leaves(v.Field(i), append(p[:len(p):len(p)], name), secret || isSecretName(name), out)
		}
		return
	case reflect.Map:
		// As config/list does: a map's entries are leaves of their own (extra_headers.<name>).
		iter := v.MapRange()
		for iter.Next() {
			leaves(iter.Value(), append(p[:len(p):len(p)], iter.Key().String()), secret, out)
		}
		return
	}
	out[p.String()] = leaf{v: v, secret: secret}
}
