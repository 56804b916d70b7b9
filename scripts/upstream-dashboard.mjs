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

// Each of the dashboard's pages (web/src/router/router.tsx), with a real agent where the route names one.
const pages = [
  ["Dashboard", "/"],
  ["Dashboard: memories", "/?tab=memories"],
  ["Agents", "/agents"],
  ["Agent chat", "/agent/default"],
  ["Agent workspace", "/agent/default/workspace"],
  ["Tools", "/tools"],
  ["Cron", "/cron"],
  ["Skills", "/skills"],
  ["SOPs", "/sops"],
  ["SOP editor", "/sops/new"],
  ["Runs", "/runs"],
  ["Integrations", "/integrations"],
  ["Config", "/config"],
  ["Config: gateway", "/config/gateway"],
  ["Config: providers", "/config/providers"],
  ["Logs", "/logs"],
  ["Doctor", "/doctor"],
  ["Pairing", "/pairing"],
  ["Canvas", "/canvas"],
  ["ACP console", "/acp-console"],
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
for (const [name, path] of pages) {
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
      consoleErrors.push(text.slice(0, 200));
    }
  });
  page.on("pageerror", (e) => pageErrors.push(String(e.message).slice(0, 200)));
  let verdict = "loads";
  let note = "";
  try {
    await page.goto(base + path, { waitUntil: "load", timeout: 20000 });
    await page.waitForTimeout(settleMs);
    const text = (await page.locator("main").first().innerText({ timeout: 2000 }).catch(() => "")) || "";
    if (/Something went wrong/.test(text)) {
      verdict = "broken";
      note = "render error: " + text.split("\n").slice(2, 3).join(" ").slice(0, 160);
    } else if (text.trim().length < 20) {
      verdict = "broken";
      note = "empty page";
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
console.log(`\n${rows.length} pages: ${counts.loads} load, ${counts.partly} partly, ${counts.broken} broken`);
