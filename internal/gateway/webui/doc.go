// Package webui is the web dashboard built into the binary (issue 27): server-rendered pages (embedded HTML)
// and small progressive-enhancement scripts of our own (vanilla JavaScript, no framework, no build step), every
// file under go:embed. The gateway serves it at / and /ui/<page>, its files at /ui/assets/<file>.
//
// The pages carry no data and need no token: each is a layout, a form and labels; its script reads the
// browser's token from localStorage (set by the pairing page, never put in a URL) and talks to the gateway's
// REST routes, /ws/chat and /api/events with "Authorization: Bearer" (the WebSocket with the "bearer.<token>"
// subprotocol), so every read and write is the gateway's own, with its grants and its browser rules.
//
// Model and platform text is hostile: scripts put it in the page only as text nodes (md.js renders Markdown
// to DOM nodes itself: no innerHTML, no raw HTML, links only to http and https). Every page is served with
// CSP, a stricter policy than the gateway's default: scripts and styles only from the gateway's own origin,
// no inline script, no frames, connections only to its own origin.
package webui
