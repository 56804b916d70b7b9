package api

// Pairing and device methods (the gateway's pairing, served on the socket for `zeroclaw pair`).
const (
	MethodPairCode      = "pair/code"
	MethodDevicesList   = "devices/list"
	MethodDevicesRevoke = "devices/revoke"
	MethodDevicesRotate = "devices/rotate"
)

// PairCodeParams are pair/code's: Profile, when set, is the permission profile the device paired with the code
// gets (instead of gateway.device_permission_profiles').
type PairCodeParams struct {
	Profile string `json:"profile,omitempty"`
}

// PairCodeResult is the result of pair/code: the pending one-time code (created when none is pending, or when
// the pending one carries another profile), and the profile it carries.
type PairCodeResult struct {
	PairingRequired bool   `json:"pairing_required"`
	PairingCode     string `json:"pairing_code"`
	Profile         string `json:"profile,omitempty"`
}

// Device is one paired gateway device (upstream's /api/devices shape). Times are RFC 3339.
type Device struct {
	ID           string   `json:"id"`
	Name         *string  `json:"name"`
	DeviceType   *string  `json:"device_type"`
	PairedAt     string   `json:"paired_at"`
	LastSeen     string   `json:"last_seen"`
	IPAddress    *string  `json:"ip_address"`
	Capabilities []string `json:"capabilities"`
}

// DevicesListResult is the result of devices/list.
type DevicesListResult struct {
	Devices []Device `json:"devices"`
	Count   int      `json:"count"`
}

// DeviceParams names a device (devices/revoke, devices/rotate).
type DeviceParams struct {
	ID string `json:"id"`
}

// DeviceRevokeResult is the result of devices/revoke.
type DeviceRevokeResult struct {
	Message  string `json:"message"`
	DeviceID string `json:"device_id"`
}

// DeviceRotateResult is the result of devices/rotate: the device's token is revoked; PairingCode is the code
// to pair again, null when one was already pending or pairing is off.
type DeviceRotateResult struct {
	DeviceID    string  `json:"device_id"`
	PairingCode *string `json:"pairing_code"`
	Message     string  `json:"message"`
}
