// mcp.js: every configured MCP server and its state (GET /api/tools, no agent: mcp_servers lists them all,
// granted or not, running or not), the agents each one is granted to (GET /api/tools?agent=<a> per agent),
// tools, pid, restarts and last error; refreshed every 3 s while visible.
'use strict';
ZC.ready(async function () {
  const { el, $, api } = ZC;
  async function load() {
    const all = await api('GET', '/api/tools');
    const byName = new Map();
    for (const s of all.mcp_servers || []) byName.set(s.name.toLowerCase(), Object.assign({ agents: [] }, s));
    const opts = await api('GET', '/api/config/agent-options');
    for (const a of opts.agents || []) {
      const r = await api('GET', '/api/tools?' + new URLSearchParams({ agent: a }));
      for (const s of r.mcp_servers || []) {
        const k = s.name.toLowerCase();
        if (!byName.has(k)) byName.set(k, Object.assign({ agents: [] }, s));
        byName.get(k).agents.push(a);
      }
    }
    const servers = [...byName.values()];
    const box = ZC.clear($('mcp-servers'));
    if (!servers.length) box.appendChild(el('p', { class: 'empty' }, 'No MCP servers configured.'));
    else box.appendChild(el('table', {}, el('caption', { class: 'sr' }, 'MCP servers'),
      el('thead', {}, el('tr', {}, ['Server', 'Agents', 'Transport', 'State', 'Tools', 'PID', 'Restarts', 'Last error'].map(h => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, servers.map(s => el('tr', { dataset: { server: s.name, state: s.state, pid: s.pid ? String(s.pid) : '', agents: String(s.agents.length) } },
        el('td', {}, el('code', {}, s.name)), el('td', {}, s.agents.length ? s.agents.join(', ') : 'none (no agent\u2019s bundle grants it)'),
        el('td', {}, s.transport || ''), el('td', { class: 'state' }, s.state || ''),
        el('td', {}, String(s.tools || 0) + (s.tool_names && s.tool_names.length ? ': ' + s.tool_names.join(', ') : '')),
        el('td', {}, s.pid ? String(s.pid) : ''), el('td', {}, String(s.restarts || 0)), el('td', { class: 'error-text' }, s.last_error || ''))))));
    document.documentElement.dataset.loaded = 'mcp';
  }
  await load();
  setInterval(() => { if (!document.hidden) load().catch(e => ZC.showError(e)); }, 3000);
});
