package config

import (
	"reflect"
	"slices"
)

// SecretValues returns every non-empty value stored in a secret field of cfg (api keys, extra headers, agent
// env, paired token hashes), sorted and without duplicates, so text leaving the daemon (logs, errors) can be
// scrubbed of them. It only reads cfg, so it is safe on a shared snapshot.
func SecretValues(cfg *Config) []string {
	if cfg == nil {
		return nil
	}
	var out []string
	collectSecrets(reflect.ValueOf(cfg).Elem(), false, &out)
	slices.Sort(out)
	return slices.Compact(out)
}

func collectSecrets(v reflect.Value, secret bool, out *[]string) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			collectSecrets(v.Field(i), secret || isSecretName(tagName(v.Type().Field(i))), out)
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			collectSecrets(iter.Value(), secret, out)
		}
	case reflect.Slice:
		for i := range v.Len() {
			collectSecrets(v.Index(i), secret, out)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			collectSecrets(v.Elem(), secret, out)
		}
	case reflect.String:
		if secret && v.String() != "" {
			*out = append(*out, v.String())
		}
	}
}
