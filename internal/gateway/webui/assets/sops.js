'use strict';
ZC.ready(async function () {
  const { el, $, api } = ZC;
  try { const r = await api('GET', '/api/sops'); $('sops-list').appendChild(ZC.tree(r.sops || r)); } catch (e) { $('sops-list').appendChild(el('p', { class: 'note' }, e.message)); }
  try { const r = await api('GET', '/api/sops/runs'); $('sops-runs').appendChild(ZC.tree(r.runs || r)); } catch (e) { $('sops-runs').appendChild(el('p', { class: 'note' }, e.message)); }
});
