// mcp.js: the MCP servers of every agent and their state (GET /api/tools?agent=<a>'s mcp_servers): state, tools, restarts, last error;
// refreshed every 3 s while visible.
'use strict';
ZC.ready(async function () {
  const { el, $, api } = ZC;
  async function load() {
    // /api/tools names an agent's servers: every agent's, each server once.
    const opts = await api('GET', '/api/config/agent-options');
    const byName = new Map();
    for (const a of opts.agents || []) {
      const r = await api('GET', '/api/tools?' + new URLSearchParams({ agent: a }));
      for (const s of r.mcp_servers || []) if (!byName.has(s.name)) byName.set(s.name, Object.assign({ agents: [] }, s));
      for (const s of r.mcp_servers || []) byName.get(s.name).agents.push(a);
    }
    const servers = [...byName.values()].sort((x, y) => x.name < y.name ? -1 : 1);
    const box = ZC.clear($('mcp-servers'));
    if (!servers.length) box.appendChild(el('p', { class: 'empty' }, 'No MCP servers configured.'));
    else box.appendChild(el('table', {}, el('caption', { class: 'sr' }, 'MCP servers'),
      el('thead', {}, el('tr', {}, ['Server', 'Agents', 'Transport', 'State', 'Tools', 'Restarts', 'Last error'].map(h => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, servers.map(s => el('tr', { dataset: { server: s.name, state: s.state, pid: s.pid ? String(s.pid) : '' } },
        el('td', {}, el('code', {}, s.name)), el('td', {}, s.agents.join(', ')), el('td', {}, s.transport || ''), el('td', { class: 'state' }, s.state || ''),
        el('td', {}, String(s.tools || 0) + (s.tool_names && s.tool_names.length ? ': ' + s.tool_names.join(', ') : '')),
        el('td', {}, String(s.restarts || 0)), el('td', { class: 'error-text' }, s.last_error || ''))))));
    document.documentElement.dataset.loaded = 'mcp';
  }
  await load();
  setInterval(() => { if (!document.hidden) load().catch(e => ZC.showError(e)); }, 3000);
});
