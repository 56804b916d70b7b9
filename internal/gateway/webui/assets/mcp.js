'use strict';
ZC.ready(async function () {
  const r = await ZC.api('GET', '/api/tools');
  const servers = r.mcp_servers || [];
  ZC.$('mcp-servers').appendChild(servers.length ? ZC.table(servers) : ZC.el('p', { class: 'empty' }, 'No MCP servers configured.'));
});
