'use strict';
ZC.ready(async function () {
  const r = await ZC.api('GET', '/api/status');
  ZC.$('status').appendChild(ZC.tree(r));
  document.documentElement.dataset.loaded = 'overview';
});
