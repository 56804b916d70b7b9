package config

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
)

// validateGateway checks [gateway] beyond the port: the path prefix's shape, positive limits, the TLS files a
// TLS gateway needs, and that device profiles exist.
func validateGateway(cfg *Config, v *validator) {
	g := cfg.Gateway
	if p := g.PathPrefix; p != "" && (!strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.ContainsAny(p, "?#*{} ")) {
		v.add(Path{"gateway", "path_prefix"}, "must start with / and not end with / (e.g. /zeroclaw), got %q", p)
	}
	for name, val := range map[string]int{
		"pair_rate_limit_per_minute": g.PairRateLimitPerMinute, "webhook_rate_limit_per_minute": g.WebhookRateLimitPerMin,
		"rate_limit_max_keys": g.RateLimitMaxKeys, "idempotency_ttl_secs": g.IdempotencyTTLSecs,
		"idempotency_max_keys": g.IdempotencyMaxKeys, "request_timeout_secs": g.RequestTimeoutSecs,
		"long_running_request_timeout_secs": g.LongRunningTimeoutSecs,
	} {
		if val < 1 {
			v.add(Path{"gateway", name}, "must be at least 1, got %d", val)
		}
	}
	if g.TLS.Enabled {
		if g.TLS.CertPath == "" {
			v.add(Path{"gateway", "tls", "cert_path"}, "is required when gateway.tls.enabled is true")
		}
		if g.TLS.KeyPath == "" {
			v.add(Path{"gateway", "tls", "key_path"}, "is required when gateway.tls.enabled is true")
		}
		if g.TLS.ClientAuth.Enabled && g.TLS.ClientAuth.CACertPath == "" {
			v.add(Path{"gateway", "tls", "client_auth", "ca_cert_path"}, "is required when client_auth is enabled")
		}
	}
	validateGatewayBounds(g, v)
	if g.WebSocketPingIntervalSecs < 0 {
		v.add(Path{"gateway", "websocket_ping_interval_secs"}, "must be 0 (no pings) or more, got %d", g.WebSocketPingIntervalSecs)
	}
	validateWSS(cfg.WSS, v)
	for _, e := range g.PairedTokenProfiles {
		hash, prof, ok := strings.Cut(e, ":")
		if !ok || len(hash) != 64 || strings.Trim(strings.ToLower(hash), "0123456789abcdef") != "" {
			v.add(Path{"gateway", "paired_token_profiles"}, "entry %q must be <64-hex token sha256>:<profile>", e)
		} else if _, defined := cfg.PermissionProfiles[prof]; !defined {
			v.add(Path{"gateway", "paired_token_profiles"}, "permission profile %q is not defined under permission_profiles", prof)
		}
	}
	for _, h := range g.AllowedHosts {
		if h == "" || strings.ContainsAny(h, "/ *?#@") {
			v.add(Path{"gateway", "allowed_hosts"}, "entry %q must be a host name or address, optionally with :port", h)
		}
	}
	for _, o := range g.AllowedOrigins {
		if !strings.HasPrefix(o, "http://") && !strings.HasPrefix(o, "https://") || strings.Count(o, "/") != 2 {
			v.add(Path{"gateway", "allowed_origins"}, "entry %q must be an origin: scheme://host[:port], no path", o)
		}
	}
	if d := g.WebDistDir; d != "" && !filepath.IsAbs(d) {
		v.add(Path{"gateway", "web_dist_dir"}, "must be an absolute path (the daemon's working directory is no anchor), got %q", d)
	}
	for _, pp := range g.DevicePermissionProfiles {
		if _, ok := cfg.PermissionProfiles[pp]; !ok {
			v.add(Path{"gateway", "device_permission_profiles"}, "permission profile %q is not defined under permission_profiles", pp)
		}
	}
}

// validateWSS checks [wss]: an enabled listener needs its certificate and key, and a port in range.
func validateWSS(w WSSConfig, v *validator) {
	if w.Port < 0 || w.Port > 65535 {
		v.add(Path{"wss", "port"}, "must be 0..65535, got %d", w.Port)
	}
	if !w.Enabled {
		return
	}
	if w.CertPath == "" {
		v.add(Path{"wss", "cert_path"}, "is required when wss.enabled is true")
	}
	if w.KeyPath == "" {
		v.add(Path{"wss", "key_path"}, "is required when wss.enabled is true")
	}
}

// validateGatewayBounds checks the connection, body, proxy and pairing-budget bounds of [gateway].
func validateGatewayBounds(g GatewayConfig, v *validator) {
	if g.MaxConnections < 0 {
		v.add(Path{"gateway", "max_connections"}, "must be 0 (derived from the fd limit) or more, got %d", g.MaxConnections)
	}
	if g.BodyMinBytesPerSec < 0 {
		v.add(Path{"gateway", "body_min_bytes_per_sec"}, "must be 0 (no rate floor) or more, got %d", g.BodyMinBytesPerSec)
	}
	for name, val := range map[string]int{"pairing_failure_budget": g.PairingFailureBudget,
		"pairing_failure_window_secs": g.PairingFailureWindowSecs} {
		if val < 1 {
			v.add(Path{"gateway", name}, "must be at least 1, got %d", val)
		}
	}
	for _, p := range g.TrustedProxies {
		if _, err := ParseProxy(p); err != nil {
			v.add(Path{"gateway", "trusted_proxies"}, "%v", err)
		}
	}
	if g.MetricsRequireToken && !g.RequirePairing {
		v.add(Path{"gateway", "metrics_require_token"}, "needs gateway.require_pairing = true (there is no paired token to require)")
	}
}

// ParseProxy parses one trusted_proxies entry: an IP ("10.0.0.7", "::1") or a CIDR ("10.0.0.0/8").
func ParseProxy(s string) (*net.IPNet, error) {
	s = strings.TrimSpace(s)
	if _, n, err := net.ParseCIDR(s); err == nil {
		return n, nil
	}
	ip := net.ParseIP(s)
	if ip == nil {
		return nil, fmt.Errorf("%q is neither an IP address nor a CIDR (e.g. 10.0.0.7 or 10.0.0.0/8)", s)
	}
	bits := 128
	if ip4 := ip.To4(); ip4 != nil {
		ip, bits = ip4, 32
	}
	return &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)}, nil
}
