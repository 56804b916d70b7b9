// devices.js: the paired devices; revoke, rotate (the new code pairs the device again), a new pairing code.
'use strict';
ZC.ready(async function () {
  const { el, $, api } = ZC;
  const body = $('devices-table').tBodies[0], out = $('devices-result');
  async function load() {
    const r = await api('GET', '/api/devices');
    ZC.clear(body);
    for (const d of r.devices || []) {
      const me = d.id === ZC.device();
      const revoke = el('button', { type: 'button', class: 'danger', dataset: { revoke: d.id } }, me ? 'Revoke (this browser)' : 'Revoke');
      revoke.addEventListener('click', async () => {
        if (!confirm('Revoke device ' + d.id + '? It loses access at once.')) return;
        try { await api('DELETE', '/api/devices/' + encodeURIComponent(d.id)); out.textContent = 'Revoked ' + d.id + '.'; if (me) { ZC.forget(); ZC.lost(); return; } load(); } catch (e) { ZC.showError(e); }
      });
      const rotate = el('button', { type: 'button', dataset: { rotate: d.id } }, 'Rotate token');
      rotate.addEventListener('click', async () => {
        try {
          const r2 = await api('POST', '/api/devices/' + encodeURIComponent(d.id) + '/token/rotate', {});
          out.textContent = r2.message + (r2.pairing_code ? ' Pairing code: ' + r2.pairing_code : '');
          if (me) { ZC.forget(); ZC.lost(); }
        } catch (e) { ZC.showError(e); }
      });
      body.appendChild(el('tr', { dataset: { device: d.id } }, el('td', {}, el('code', {}, d.id), me ? ' (this browser)' : ''),
        el('td', {}, d.name || ''), el('td', {}, (d.capabilities || []).join(', ')), el('td', {}, ZC.when(d.last_seen)), el('td', {}, rotate, ' ', revoke)));
    }
    document.documentElement.dataset.loaded = 'devices';
  }
  $('devices-code').addEventListener('click', async () => {
    try { const r = await api('POST', '/api/pairing/initiate', {}); $('devices-newcode').textContent = 'Code: ' + (r.pairing_code || r.code || JSON.stringify(r)); } catch (e) { ZC.showError(e); }
  });
  await load();
});
