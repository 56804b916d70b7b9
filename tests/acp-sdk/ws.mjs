// Drives the gateway's /acp WebSocket with the public ACP client SDK: the SDK's Stream (JSON-RPC message
// objects) is adapted to WebSocket text frames, one message per frame. A paired token authenticates the
// upgrade; the prompt streams, a shell tool call is allowed through session/request_permission, and the turn
// ends with end_turn.
//
// Usage: node ws.mjs ws://127.0.0.1:<port>/acp?agent=<alias> <token> <project dir>
//   (internal/e2e TestACPOverGatewayWebSocket runs it against the built binary's daemon)
import { client, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import WebSocket from "ws";

const [url, token, project] = process.argv.slice(2);
if (!url || !token || !project) {
  console.error("usage: node ws.mjs <ws url> <token> <project dir>");
  process.exit(2);
}
const guard = setTimeout(() => {
  console.error("acp-ws test: timed out");
  process.exit(1);
}, 60_000);

// wsStream opens the socket and adapts it to the SDK's Stream.
async function wsStream(url, headers) {
  const ws = new WebSocket(url, ["zeroclaw.acp.v1"], { headers });
  await new Promise((ok, fail) => {
    ws.once("open", ok);
    ws.once("unexpected-response", (req, res) => {
      req.destroy();
      fail(new Error(`upgrade refused: ${res.statusCode}`));
    });
    ws.once("error", fail);
  });
  assert.equal(ws.protocol, "zeroclaw.acp.v1", "the subprotocol is echoed");
  let open = true; // the SDK cancels the readable when it is done with the connection
  const readable = new ReadableStream({
    start(controller) {
      ws.on("message", (data, isBinary) => {
        assert.equal(isBinary, false, "frames are text");
        const text = data.toString("utf8");
        assert.ok(!text.includes("\n"), "one compact JSON message per frame");
        if (open) controller.enqueue(JSON.parse(text));
      });
      ws.on("close", () => open && ((open = false), controller.close()));
      ws.on("error", (err) => open && ((open = false), controller.error(err)));
    },
    cancel() {
      open = false;
    },
  });
  const writable = new WritableStream({
    write(msg) {
      return new Promise((ok, fail) => ws.send(JSON.stringify(msg), (err) => (err ? fail(err) : ok())));
    },
    close() {
      ws.close(1000);
    },
  });
  return { ws, stream: { readable, writable } };
}

// A bad token is refused before the upgrade.
await assert.rejects(wsStream(url, { Authorization: "Bearer zc_" + "0".repeat(64) }), /upgrade refused: 401/);

const permissions = [];
const app = client({ name: "acp-ws" });
app.onRequest("session/request_permission", ({ params }) => {
  permissions.push(params);
  return { outcome: { outcome: "selected", optionId: "allow-once" } };
});
const { ws, stream } = await wsStream(url, { Authorization: `Bearer ${token}` });
await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request("initialize", {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  });
  assert.equal(init.protocolVersion, 1);
  assert.equal(init.agentInfo.name, "zeroclaw-acp");
  const session = await ctx.buildSession(project).start();
  assert.ok(session.sessionId, "session/new answered a session id");

  const until = async () => {
    const updates = [];
    for (;;) {
      const m = await session.nextUpdate();
      if (m.kind === "stop") return { updates, stopReason: m.stopReason };
      updates.push(m.update);
    }
  };
  let p = session.prompt("hello over the gateway");
  let turn = await until();
  assert.equal((await p).stopReason, "end_turn");
  const text = turn.updates.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content.text).join("");
  assert.match(text, /hello over the gateway/);

  p = session.prompt('/tool shell {"command": "echo ws > proof.txt"}');
  turn = await until();
  assert.equal((await p).stopReason, "end_turn");
  assert.equal(permissions.length, 1, "one permission request");
  assert.equal(permissions[0].sessionId, session.sessionId);
  assert.deepEqual(turn.updates.filter((u) => u.sessionUpdate === "tool_call_update").map((u) => u.status), ["completed"]);
  assert.equal(fs.readFileSync(path.join(project, "proof.txt"), "utf8"), "ws\n");
});
ws.close(1000);
clearTimeout(guard);
console.log("acp over the gateway WebSocket: ok");
