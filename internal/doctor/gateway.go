package doctor

import (
	"fmt"
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
			r.warn(CategoryGateway, "gateway-stale", "", "the gateway serves "+st.URL+", but the config asks for another address: "+st.Error,
				"free that address or set gateway.host/gateway.port back; zeroclaw config set gateway.port PORT rebinds at once")
			return
		}
		r.ok(CategoryGateway, "gateway-served", "the gateway serves "+st.URL)
	case api.GatewayDisabled:
		r.ok(CategoryGateway, "gateway-disabled", "gateway not served: "+st.Error)
	default:
		r.fail(CategoryGateway, "gateway-not-served", "", fmt.Sprintf("the gateway is configured at %s but not served: %s", st.Addr, st.Error),
			gatewayFix(st))
	}
}

// gatewayFix says how to get the gateway served; a taken port gets the commands that find the holder and move
// this gateway to the next port.
func gatewayFix(st api.GatewayStatus) string {
	host, port, err := net.SplitHostPort(st.Addr)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil {
		return "fix [gateway] in config.toml, then zeroclaw config reload"
	}
	if strings.Contains(st.Error, syscall.EADDRINUSE.Error()) { // the bind error crossed the socket as text
		return fmt.Sprintf("another process listens on %s (find it: ss -ltnp 'sport = :%d'); stop it, or move this gateway: zeroclaw config set gateway.port %d (the daemon rebinds at once)",
			net.JoinHostPort(host, port), n, n+1)
	}
	return fmt.Sprintf("fix what the error names, then zeroclaw config reload (or set another address: zeroclaw config set gateway.port %d)", n+1)
}
