package doctor

import (
	"net"
	"strconv"
	"strings"
	"syscall"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
)

// checkGateway reports a gateway that [gateway] configures but the daemon does not serve (its port taken by
// another process, a bad TLS file) as an error: until it is fixed, a client on that port may be talking to
// someone else's daemon.
func checkGateway(r *report, st api.GatewayStatus) {
	switch st.State {
	case api.GatewayServed:
		if st.Error != "" {
			r.warn(CategoryGateway, "gateway-stale", "", r.t("doctor-gateway-stale", "url", st.URL, "error", st.Error), r.t("doctor-gateway-stale-fix"))
			return
		}
		r.ok(CategoryGateway, "gateway-served", r.t("doctor-gateway-served", "url", st.URL))
	case api.GatewayDisabled:
		r.ok(CategoryGateway, "gateway-disabled", r.t("doctor-gateway-disabled", "reason", st.Error))
	default:
		r.fail(CategoryGateway, "gateway-not-served", "", r.t("doctor-gateway-not-served", "addr", st.Addr, "error", st.Error), gatewayFix(r, st))
	}
}

// gatewayFix says how to get the gateway served; a taken port gets the commands that find the holder and move
// this gateway to the next port.
func gatewayFix(r *report, st api.GatewayStatus) string {
	host, port, err := net.SplitHostPort(st.Addr)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil {
		return r.t("doctor-gateway-fix-config")
	}
	if strings.Contains(st.Error, syscall.EADDRINUSE.Error()) { // the bind error crossed the socket as text
		return r.t("doctor-gateway-fix-in-use", "addr", net.JoinHostPort(host, port), "port", strconv.Itoa(n), "next", strconv.Itoa(n+1))
	}
	return r.t("doctor-gateway-fix-other", "next", strconv.Itoa(n+1))
}
