'use strict';
ZC.ready(async function () {
  const { el, $ } = ZC;
  const r = await ZC.api('GET', '/api/status');
  const ch = r.channels || {};
  const rows = Array.isArray(ch) ? ch : Object.entries(ch).map(([name, v]) => (v && typeof v === 'object') ? Object.assign({ name: name }, v) : { name: name, state: v });
  $('channels-list').appendChild(rows.length ? ZC.table(rows, null, 'Channels') : el('p', { class: 'empty' }, 'No channels configured.'));
  document.documentElement.dataset.loaded = 'channels';
});
