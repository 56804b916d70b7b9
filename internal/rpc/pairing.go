package rpc

import (
	"context"
	"time"

	"github.com/zeroclaw-go/zeroclaw/internal/api"
	"github.com/zeroclaw-go/zeroclaw/internal/pairing"
	"github.com/zeroclaw-go/zeroclaw/internal/router"
	"github.com/zeroclaw-go/zeroclaw/internal/store"
)

// registerPairing serves pair/code and devices/* over the pairing domain (the gateway's routes call these).
// Minting a code (pair/code, devices/rotate) is the owner's alone (the admin grant): a device paired with it
// may be the owner's equal, so a lesser principal holding it could raise itself.
func (s *Server) registerPairing(m *pairing.Manager) {
	s.register(api.MethodPairCode, handle(api.GrantAdmin, func(_ context.Context, _ *Peer, p *api.PairCodeParams) (api.PairCodeResult, error) {
		code, err := m.CodeFor(p.Profile)
		if err != nil {
			return api.PairCodeResult{}, err
		}
		return api.PairCodeResult{PairingRequired: true, PairingCode: code, Profile: p.Profile}, nil
	}))
	s.register(api.MethodDevicesList, handle(api.GrantDevicesRead, func(ctx context.Context, _ *Peer, _ *noParams) (api.DevicesListResult, error) {
		devs, err := m.Devices(ctx)
		if err != nil {
			return api.DevicesListResult{}, err
		}
		out := api.DevicesListResult{Devices: make([]api.Device, 0, len(devs)), Count: len(devs)}
		for _, d := range devs {
			out.Devices = append(out.Devices, wireDevice(d))
		}
		return out, nil
	}))
	s.register(api.MethodDevicesRevoke, handle(api.GrantDevicesDelete, func(ctx context.Context, _ *Peer, p *api.DeviceParams) (api.DeviceRevokeResult, error) {
		if p.ID == "" {
			return api.DeviceRevokeResult{}, router.InvalidParams("id is required")
		}
		if err := m.Revoke(ctx, p.ID); err != nil {
			return api.DeviceRevokeResult{}, err
		}
		return api.DeviceRevokeResult{Message: "Device revoked and bearer token invalidated", DeviceID: p.ID}, nil
	}))
	s.register(api.MethodDevicesRotate, handle(api.GrantAdmin, func(ctx context.Context, _ *Peer, p *api.DeviceParams) (api.DeviceRotateResult, error) {
		if p.ID == "" {
			return api.DeviceRotateResult{}, router.InvalidParams("id is required")
		}
		code, err := m.Rotate(ctx, p.ID)
		if err != nil {
			return api.DeviceRotateResult{}, err
		}
		res := api.DeviceRotateResult{DeviceID: p.ID, Message: "Token revoked; pair the device again with the new code"}
		if code != "" {
			res.PairingCode = &code
		} else {
			res.Message = "Token revoked; a pairing code is already pending (or pairing is off)"
		}
		return res, nil
	}))
}

func wireDevice(d store.Device) api.Device {
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	caps := d.Capabilities
	if caps == nil {
		caps = []string{}
	}
	return api.Device{ID: d.ID, Name: opt(d.Name), DeviceType: opt(d.DeviceType), PairedAt: d.PairedAt.UTC().Format(time.RFC3339),
		LastSeen: d.LastSeen.UTC().Format(time.RFC3339), IPAddress: opt(d.IPAddress), Capabilities: caps}
}
