// Package dashboard is the gateway's compatibility layer with upstream's web dashboard
// (zeroclaw-labs/zeroclaw's crates/zeroclaw-gateway and web/src/types/api.ts, the client that must parse):
// the pure shape conversions behind the gateway's /api/config, /api/status and web_dist_dir routes. It
// builds answers from the native methods' results and the config; it calls nothing and writes no HTTP
// response: the gateway's thin handlers do that (and map PatchError to their failure bodies).
package dashboard
