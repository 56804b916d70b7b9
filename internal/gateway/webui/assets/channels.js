// channels.js: the running chat channels (GET /api/channels): state, health, counts, last error.
'use strict';
ZC.ready(async function () {
  const { el, $ } = ZC;
  const r = await ZC.api('GET', '/api/channels');
  const rows = (r.channels || []).map(c => ({ name: c.name, type: c.type, agent: c.owning_agent || '', state: c.state || c.status,
    health: c.health, messages: c.message_count, restarts: c.restarts, last_message: ZC.when(c.last_message_at), last_error: c.last_error || '' }));
  $('channels-list').appendChild(rows.length ? ZC.table(rows, null, 'Channels') : el('p', { class: 'empty' }, 'No channel is running.'));
  document.documentElement.dataset.loaded = 'channels';
});
