// Drives upstream's built web dashboard, served by our gateway, in headless Chromium: every page once, and
// prints a table of what each did (loads / partly / broken) with the failing requests and console errors.
// Run by scripts/upstream-dashboard.sh, which builds the dashboard, starts the daemon and pairs.
//
// Usage: node upstream-dashboard.mjs BASE_URL TOKEN [CHROMIUM]   (playwright-core must resolve from here)
// Exit status: 0 when it ran (whatever the pages did), 2 on bad usage, 1 when Chromium could not run.
import { chromium } from "playwright-core";

const [base, token, executablePath = "/usr/bin/chromium"] = process.argv.slice(2);
if (!base || !token) {
  console.error("usage: node upstream-dashboard.mjs BASE_URL TOKEN [CHROMIUM]");
  process.exit(2);
}

// Each of the dashboard's pages (web/src/router/router.tsx) and the landing page's tabs (pages/Dashboard.tsx),
// with a real agent where the route names one.
// A third member is text the page must show (what the daemon's answers put there), else it is "partly".
const pages = [
  ["Dashboard", "/"],
  ["Dashboard: sessions", "/?tab=sessions"],
  ["Dashboard: channels", "/?tab=channels"],
  ["Dashboard: memories", "/?tab=memories"],
  ["Dashboard: health", "/?tab=health"],
  ["Dashboard: cost", "/?tab=cost"],
  ["Agents", "/agents", "echo.default"],
  ["Agent chat", "/agent/default"],
  ["Agent workspace", "/agent/default/workspace", "SOUL.md"],
  ["Tools", "/tools", "file_read"],
  ["Cron", "/cron", "nightly"],
  ["Skills", "/skills"],
  ["SOPs", "/sops"],
  ["SOP editor", "/sops/new"],
  ["Runs", "/runs"],
  ["Integrations", "/integrations", "Echo"],
  ["Config", "/config"],
  ["Config: gateway", "/config/gateway", "web_dist_dir"],
  ["Config: providers", "/config/providers"],
  ["Config: provider", "/config/providers.models/echo/default"],
  ["Config: agent", "/config/agents/default"],
  ["Config: skill bundles", "/config/skill_bundles", "team"],
  ["Config: skill bundle", "/config/skill_bundles/team", "New skill"],
  ["Config: cron", "/config/cron", "cron.nightly"],
  ["Config: cron job", "/config/cron/nightly"],
  ["Logs", "/logs", "events"],
  ["Doctor", "/doctor"],
  ["Pairing", "/pairing"],
  ["Canvas", "/canvas"],
  ["ACP console", "/acp-console", "connected"],
  ["Quickstart", "/quickstart"],
];

// How long a page is watched after it loaded: its first fetches and renders (the event stream never idles).
const settleMs = Number(process.env.SETTLE_MS ?? 3000);

let browser;
try {
  browser = await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox"] });
} catch (e) {
  console.error(`Chromium did not start (${executablePath}): ${e.message}`);
  process.exit(1);
}
const context = await browser.newContext();
await context.addInitScript((t) => localStorage.setItem("zeroclaw_token", t), token);

const rows = [];
for (const [name, path, expect] of pages) {
  const page = await context.newPage();
  const failed = new Map(); // "METHOD /path status" -> count
  const consoleErrors = [];
  const pageErrors = [];
  page.on("response", (res) => {
    const u = new URL(res.url());
    if (u.origin === new URL(base).origin && res.status() >= 400) {
      const key = `${res.request().method()} ${u.pathname} ${res.status()}`;
      failed.set(key, (failed.get(key) ?? 0) + 1);
    }
  });
  page.on("requestfailed", (req) => {
    const u = new URL(req.url());
    const err = req.failure()?.errorText ?? "";
    if (u.origin === new URL(base).origin && !err.includes("ERR_ABORTED")) failed.set(`${req.method()} ${u.pathname} ${err}`, 1);
  });
  page.on("console", (m) => {
    const text = m.text();
    // Left out: a failed load (listed above as its request), and the Google Fonts stylesheet, which the CSP
    // refuses here exactly as upstream's own gateway's CSP does (font-src 'self').
    if (m.type() === "error" && !text.startsWith("Failed to load resource") && !text.includes("fonts.googleapis.com")) {
      consoleErrors.push(text.split("\n")[0].slice(0, 200));
    }
  });
  page.on("pageerror", (e) => pageErrors.push(String(e.message).split("\n")[0].slice(0, 200)));
  let verdict = "loads";
  let note = "";
  try {
    await page.goto(base + path, { waitUntil: "load", timeout: 20000 });
    await page.waitForTimeout(settleMs);
    const text = (await page.locator("main").first().innerText({ timeout: 2000 }).catch(() => "")) || "";
    if (/Something went wrong/.test(text)) {
      verdict = "broken";
      const shown = await page.locator("main pre").first().innerText({ timeout: 1000 }).catch(() => "");
      note = "render error: " + shown.split("\n")[0].slice(0, 160);
    } else if (text.trim().length < 20) {
      verdict = "broken";
      note = "empty page";
    } else if (expect && !text.includes(expect)) {
      verdict = "partly";
      note = `does not show "${expect}"`;
    } else if (pageErrors.length || failed.size || consoleErrors.length) {
      verdict = "partly";
    }
  } catch (e) {
    verdict = "broken";
    note = "navigation: " + e.message.split("\n")[0];
  }
  rows.push({ name, path, verdict, note, failed: [...failed.keys()], consoleErrors, pageErrors });
  await page.close();
}
// Flows through the routes of issue 23 that a page load alone does not exercise, each as a user does it.
const flows = [];
async function flow(name, fn) {
  const page = await context.newPage();
  const seen = [];
  page.on("response", (r) => {
    const u = new URL(r.url());
    if (u.origin === new URL(base).origin && u.pathname.startsWith("/api/")) seen.push(`${r.request().method()} ${u.pathname} ${r.status()}`);
  });
  try {
    await fn(page, seen);
    flows.push({ name, ok: true, note: "" });
  } catch (e) {
    flows.push({ name, ok: false, note: e.message.split("\n")[0] });
  } finally {
    await page.close();
  }
}
const until = async (what, cond, ms = 5000) => {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
    if (await cond()) return;
  }
  throw new Error("timed out waiting for " + what);
};

// The shared/ directory picker of a *_dir config field: create a folder, delete it, and be refused deleting a
// folder that holds a file (the shell script makes shared/not-empty/keep.txt).
await flow("Config → Browse: new folder, delete it, refused on a non-empty one", async (page, seen) => {
  const name = `drive-${Date.now()}`;
  await page.goto(base + "/config/gateway", { waitUntil: "load" });
  await page.locator("[data-dirpicker-trigger]").first().click({ timeout: 10000 });
  await page.getByRole("button", { name: "New folder here" }).click({ timeout: 5000 });
  await page.getByPlaceholder("new folder name").fill(name);
  await page.getByRole("button", { name: "Create", exact: true }).click();
  await until("POST /api/browse/mkdir 200", () => seen.includes("POST /api/browse/mkdir 200"));
  const del = page.getByRole("button", { name: `Delete shared/${name}` });
  await del.waitFor({ timeout: 5000 });
  await del.click();
  await page.getByRole("button", { name: "Delete", exact: true }).click({ timeout: 5000 });
  await until("DELETE /api/browse/rmdir 200", () => seen.includes("DELETE /api/browse/rmdir 200"));
  await until("the folder to leave the list", async () => (await del.count()) === 0);
  await page.getByRole("button", { name: "Delete shared/not-empty" }).click({ timeout: 5000 });
  await page.getByRole("button", { name: "Delete", exact: true }).click({ timeout: 5000 });
  await until("DELETE /api/browse/rmdir 409", () => seen.includes("DELETE /api/browse/rmdir 409"));
  await until("the refusal shown", async () => (await page.getByText(/not empty/).count()) > 0);
});

// The sessions list on the landing page reloads when the live stream says session_created.
await flow("Dashboard: a new session appears live (session_created on /api/events)", async (page, seen) => {
  await page.goto(base + "/?tab=sessions", { waitUntil: "load" });
  await until("the event stream", () => seen.includes("GET /api/events 200"), 10000);
  await until("the first sessions list", () => seen.some((s) => s.startsWith("GET /api/sessions 200")), 10000);
  const before = seen.filter((s) => s.startsWith("GET /api/sessions 200")).length;
  const chat = await context.newPage();
  await chat.goto(base + "/_app/logo.png");
  await chat.evaluate(([b, t]) => new Promise((ok, bad) => {
    const ws = new WebSocket(b.replace(/^http/, "ws") + "/ws/chat?agent=default&token=" + encodeURIComponent(t));
    ws.onmessage = () => ok();
    ws.onerror = () => bad(new Error("/ws/chat refused"));
  }), [base, token]);
  await until("a sessions reload after session_created", () => seen.filter((s) => s.startsWith("GET /api/sessions 200")).length > before);
  await chat.close();
});

await browser.close();

const counts = { loads: 0, partly: 0, broken: 0 };
console.log("| page | path | result | failing requests / errors |");
console.log("|---|---|---|---|");
for (const r of rows) {
  counts[r.verdict]++;
  const why = [r.note, ...r.failed, ...r.pageErrors.map((e) => "uncaught: " + e),
    ...[...new Set(r.consoleErrors)].slice(0, 3).map((e) => "console: " + e)].filter(Boolean);
  console.log(`| ${r.name} | \`${r.path}\` | ${r.verdict} | ${why.join("; ").replaceAll("|", "\\|") || "-"} |`);
}
console.log(`\n${rows.length} pages: ${counts.loads} load, ${counts.partly} partly, ${counts.broken} broken\n`);
for (const f of flows) console.log(`flow: ${f.ok ? "ok    " : "FAILED"} ${f.name}${f.note ? ": " + f.note : ""}`);
