// Drives `zeroclaw acp` with the public ACP client SDK, as an editor would: initialize, session/new, a streamed
// prompt ending with end_turn, a shell tool call the client allows through session/request_permission, a cancelled
// prompt, then a second process (on a fresh ephemeral daemon) that session/loads the session and must replay the
// same history. The model is a fake OpenAI-compatible SSE server started here.
//
// Usage: node test.mjs /path/to/zeroclaw   (HOME is the install's home; internal/e2e TestACPPublicSDK runs it)
import { client, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { Readable, Writable } from "node:stream";

const bin = process.argv[2];
const home = process.env.HOME;
if (!bin || !home) {
  console.error("usage: HOME=<test home> node test.mjs /path/to/zeroclaw");
  process.exit(2);
}
const guard = setTimeout(() => {
  console.error("acp-sdk test: timed out");
  process.exit(1);
}, 90_000);

// --- the fake model: OpenAI chat.completions streaming --------------------------------------------------------
const modelRequests = [];
const model = http.createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    const request = JSON.parse(body);
    modelRequests.push(request);
    const last = request.messages[request.messages.length - 1];
    res.writeHead(200, { "content-type": "text/event-stream" });
    const send = (delta, finish = null) =>
      res.write(`data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
    const end = () => res.end("data: [DONE]\n\n");
    if (last.role === "tool") {
      send({ content: "The command ran." });
      send({}, "stop");
      return end();
    }
    if (last.content.includes("hello")) {
      send({ content: "Hello " });
      send({ content: "from the fake model." });
      send({}, "stop");
      return end();
    }
    if (last.content.includes("run it")) {
      send({ role: "assistant", content: null, tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "shell", arguments: "" } }] });
      send({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify({ command: "echo acp > proof.txt" }) } }] });
      send({}, "tool_calls");
      return end();
    }
    // "think forever": one chunk, then the stream stays open until the daemon drops it (the cancel).
    send({ content: "Thinking... " });
  });
});
await new Promise((ok) => model.listen(0, "127.0.0.1", ok));
const modelURL = `http://127.0.0.1:${model.address().port}/v1`;

const root = path.join(home, ".zeroclaw");
fs.mkdirSync(root, { recursive: true, mode: 0o700 });
fs.writeFileSync(
  path.join(root, "config.toml"),
  `schema_version = 3

[providers.models.openai.fake]
uri = "${modelURL}"
model = "m"
api_key = "sk-test"

[agents.coder]
model_provider = "openai.fake"
risk_profile = "supervised"

[risk_profiles.supervised]
level = "supervised"
workspace_only = true
always_ask = ["shell"]

# The editor opens its project, outside the agent's workspace: the owner allows directories below home.
[acp]
allowed_roots = ["${home}"]
`,
  { mode: 0o600 },
);
const project = fs.realpathSync(fs.mkdtempSync(path.join(home, "project-")));
const acpSock = path.join(root, "data", "acp.sock");

// --- one `zeroclaw acp` process driven by the SDK --------------------------------------------------------------
async function withAgent(name, handlers, op) {
  const child = spawn(bin, ["acp"], { env: { HOME: home, PATH: process.env.PATH }, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (c) => (stderr += c));
  const exited = new Promise((ok) => child.on("exit", (code, signal) => ok({ code, signal })));
  const app = client({ name });
  for (const [method, h] of Object.entries(handlers.requests ?? {})) app.onRequest(method, h);
  for (const [method, h] of Object.entries(handlers.notifications ?? {})) app.onNotification(method, h);
  const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  let result;
  try {
    result = await app.connectWith(stream, op);
  } catch (err) {
    child.kill();
    throw new Error(`${name}: ${err?.stack ?? err}\n--- zeroclaw acp stderr:\n${stderr}`);
  }
  child.stdin.end();
  const { code, signal } = await exited;
  assert.equal(code, 0, `${name}: zeroclaw acp exited with ${code ?? signal}; stderr:\n${stderr}`);
  return result;
}

async function initialize(ctx) {
  const init = await ctx.request("initialize", {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  });
  assert.equal(init.protocolVersion, 1);
  assert.equal(init.agentCapabilities.loadSession, true);
  assert.equal(init.agentCapabilities.promptCapabilities.embeddedContext, true);
  assert.equal(init.agentInfo.name, "zeroclaw-acp");
}

// transcript folds updates into comparable entries: consecutive agent text is joined, tool calls keep id and status.
function transcript(updates) {
  const out = [];
  for (const u of updates) {
    switch (u.sessionUpdate) {
      case "user_message_chunk":
        out.push(`user: ${u.content.text}`);
        break;
      case "agent_message_chunk":
        if (out.length && out[out.length - 1].startsWith("agent: ")) out[out.length - 1] += u.content.text;
        else out.push(`agent: ${u.content.text}`);
        break;
      case "tool_call":
        out.push(`tool_call ${u.toolCallId} ${u.kind} ${JSON.stringify(u.rawInput)}`);
        break;
      case "tool_call_update":
        out.push(`tool_call_update ${u.toolCallId} ${u.status}`);
        break;
      default:
        out.push(u.sessionUpdate);
    }
  }
  return out;
}

// until reads an active session's messages up to the stop of the current prompt, returning its updates.
async function untilStop(session, onUpdate = () => {}) {
  const updates = [];
  for (;;) {
    const m = await session.nextUpdate();
    if (m.kind === "stop") return { updates, stopReason: m.stopReason };
    updates.push(m.update);
    await onUpdate(m.update);
  }
}

// --- first process: a whole session ----------------------------------------------------------------------------
const permissionRequests = [];
const live = []; // the transcript as the client saw it, prompts included
const sessionId = await withAgent(
  "first",
  {
    requests: {
      "session/request_permission": ({ params }) => {
        permissionRequests.push(params);
        return { outcome: { outcome: "selected", optionId: "allow-once" } };
      },
    },
  },
  async (ctx) => {
    await initialize(ctx);
    const session = await ctx.buildSession(project).start();
    assert.match(session.sessionId, /^[0-9a-f-]{36}$/);

    // 1. A streamed answer.
    let p = session.prompt("say hello");
    let turn = await untilStop(session);
    assert.equal((await p).stopReason, "end_turn");
    assert.equal(turn.stopReason, "end_turn");
    assert.deepEqual(transcript(turn.updates), ["agent: Hello from the fake model."]);
    assert.ok(turn.updates.filter((u) => u.sessionUpdate === "agent_message_chunk").length >= 2, "the answer was streamed in chunks");
    live.push("user: say hello", ...transcript(turn.updates));

    // 2. A tool call that needs permission, allowed by the client.
    p = session.prompt([{ type: "text", text: "run it" }]);
    turn = await untilStop(session);
    assert.equal((await p).stopReason, "end_turn");
    assert.deepEqual(transcript(turn.updates), [
      'tool_call call_1 execute {"command":"echo acp > proof.txt"}',
      "tool_call_update call_1 completed",
      "agent: The command ran.",
    ]);
    assert.equal(permissionRequests.length, 1);
    const perm = permissionRequests[0];
    assert.equal(perm.sessionId, session.sessionId);
    assert.equal(perm.toolCall.toolCallId, "call_1");
    assert.deepEqual(perm.options.map((o) => o.optionId), ["allow-once", "allow-always", "reject-once"]);
    assert.equal(fs.readFileSync(path.join(project, "proof.txt"), "utf8"), "acp\n");
    live.push("user: run it", ...transcript(turn.updates));

    // 3. A prompt cancelled while it streams.
    p = session.prompt("think forever");
    turn = await untilStop(session, async (u) => {
      if (u.sessionUpdate === "agent_message_chunk") await ctx.notify("session/cancel", { sessionId: session.sessionId });
    });
    assert.equal((await p).stopReason, "cancelled");
    assert.equal(turn.stopReason, "cancelled");
    live.push("user: think forever", ...transcript(turn.updates));
    session.dispose();
    return session.sessionId;
  },
);

// The ephemeral daemon leaves once its last client has gone; the next process starts a fresh one.
for (let i = 0; fs.existsSync(acpSock); i++) {
  if (i > 1500) throw new Error("the ephemeral daemon did not exit after its last client left");
  await new Promise((ok) => setTimeout(ok, 10));
}

// --- second process: session/load replays the same history ----------------------------------------------------
const replayed = [];
await withAgent(
  "second",
  { notifications: { "session/update": ({ params }) => void (params.sessionId === sessionId && replayed.push(params.update)) } },
  async (ctx) => {
    await initialize(ctx);
    const res = await ctx.request("session/load", { sessionId, cwd: project, mcpServers: [] });
    assert.deepEqual(res ?? {}, {});
  },
);
const replay = transcript(replayed);
assert.deepEqual(replay, live, `session/load replay differs from the live session:\nreplay ${JSON.stringify(replay, null, 1)}\nlive ${JSON.stringify(live, null, 1)}`);

// The cancelled turn was stored and is in the model context of the turns after it (checked on the fake's side:
// the tool call's request carried the first turn).
assert.ok(
  modelRequests.some((r) => r.messages.some((m) => m.content === "Hello from the fake model.")),
  "the second turn's model request lacks the first answer",
);

clearTimeout(guard);
model.close();
console.log(`acp-sdk test passed: ${live.length} transcript entries replayed for session ${sessionId}`);
