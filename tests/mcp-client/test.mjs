// Drives the daemon as an MCP server with the official TypeScript MCP SDK's client (the library the MCP
// inspector is built on), over both transports: `zeroclaw mcp serve` on stdio, and the gateway's /mcp over
// streamable HTTP with a paired token. Every tool is listed with an object schema and called; a device without
// a grant gets a tool error naming it, and its call changes nothing.
//
// Usage: node test.mjs <zeroclaw binary> <gateway base URL> <owner token> <reader token>
//   (internal/e2e TestMCPTypeScriptSDK runs it against the built binary's daemon; HOME names its install)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import assert from "node:assert/strict";

const [binary, base, ownerToken, readerToken] = process.argv.slice(2);
if (!binary || !base || !ownerToken || !readerToken) {
  console.error("usage: node test.mjs <zeroclaw binary> <gateway base URL> <owner token> <reader token>");
  process.exit(2);
}
const guard = setTimeout(() => {
  console.error("mcp-client test: timed out");
  process.exit(1);
}, 90_000);

const TOOLS = ["cron_add", "cron_list", "memory_search", "memory_store", "session_messages", "session_search", "sop_list", "sop_run", "sop_runs"];

async function connect(transport) {
  const client = new Client({ name: "zeroclaw-ts-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

function http(token) {
  return new StreamableHTTPClientTransport(new URL(base + "/mcp"), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
}

function structured(res) {
  assert.equal(res.isError ?? false, false, `tool error: ${JSON.stringify(res.content)}`);
  assert.equal(res.content[0].type, "text");
  assert.deepEqual(JSON.parse(res.content[0].text), res.structuredContent, "text and structuredContent agree");
  return res.structuredContent;
}

// exercise lists and calls every tool through client; tag keeps the two transports' data apart.
async function exercise(client, tag) {
  const info = client.getServerVersion();
  assert.equal(info.name, "zeroclaw");
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), TOOLS);
  for (const t of tools) {
    assert.equal(t.inputSchema.type, "object", `${t.name} has an object schema`);
    assert.match(t.description, /Needs the grant [a-z]+:[a-z]+\./);
  }
  const stored = structured(await client.callTool({ name: "memory_store", arguments: { key: `k-${tag}`, content: `remembered over ${tag}` } }));
  assert.equal(stored.stored, true);
  const found = structured(await client.callTool({ name: "memory_search", arguments: { query: `remembered over ${tag}` } }));
  assert.ok(found.entries.some((e) => e.key === `k-${tag}`), JSON.stringify(found));
  const job = structured(await client.callTool({ name: "cron_add", arguments: { agent: "default", schedule: "0 3 * * *", prompt: "nightly", name: `job-${tag}` } }));
  assert.equal(job.name, `job-${tag}`);
  const jobs = structured(await client.callTool({ name: "cron_list", arguments: {} }));
  assert.ok(jobs.jobs.some((j) => j.name === `job-${tag}`));
  const sessions = structured(await client.callTool({ name: "session_search", arguments: { limit: 5 } }));
  assert.ok(Array.isArray(sessions.sessions));
  const msgs = structured(await client.callTool({ name: "session_messages", arguments: { session_id: "none-such" } }));
  assert.deepEqual(msgs.messages, []);
  const bad = await client.callTool({ name: "memory_search", arguments: { query: "x", limit: "ten" } });
  assert.equal(bad.isError, true);
  assert.equal(bad.structuredContent.error.code, -32602);
}

const stdio = await connect(new StdioClientTransport({ command: binary, args: ["mcp", "serve"], env: process.env, stderr: "inherit" }));
await exercise(stdio, "stdio");
await stdio.close();
console.log("stdio: every tool listed and called");

const owner = await connect(http(ownerToken));
await exercise(owner, "http");
console.log("http: every tool listed and called");

const reader = await connect(http(readerToken));
const refused = await reader.callTool({ name: "memory_store", arguments: { key: "planted", content: "by the reader" } });
assert.equal(refused.isError, true);
assert.equal(refused.structuredContent.error.code, -32012);
assert.equal(refused.content[0].text, "Forbidden: missing grant memory:write");
const read = structured(await reader.callTool({ name: "memory_search", arguments: { query: "by the reader" } }));
assert.ok(!read.entries.some((e) => e.key === "planted"), "a refused store stored nothing");
await reader.close();
await owner.close();
console.log("http: the reader's memory_store refused with -32012");

let unauthorized;
try {
  await connect(http("not-a-token"));
} catch (e) {
  unauthorized = e;
}
assert.ok(unauthorized, "a bad token is refused");
assert.equal(unauthorized.code, 401, `a bad token is 401: ${unauthorized}`);
assert.match(String(unauthorized), /Unauthorized/);
console.log("http: a bad token is refused");
clearTimeout(guard);
