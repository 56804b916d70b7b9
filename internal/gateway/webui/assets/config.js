// config.js: every property (secrets masked: the daemon never sends their values), and one property set at a
// time (PUT /api/config/prop); the daemon's validation error is shown beside the field.
'use strict';
ZC.ready(async function () {
  const { el, $, api } = ZC;
  const body = $('config-table').tBodies[0], err = $('config-error');
  let entries = [];
  async function load() {
    const r = await api('GET', '/api/config/list');
    entries = r.entries || [];
    const dl = ZC.clear($('config-props'));
    for (const e of entries) dl.appendChild(el('option', { value: e.path }));
    render();
    document.documentElement.dataset.loaded = 'config';
  }
  function render() {
    const f = $('config-filter').value.toLowerCase();
    ZC.clear(body);
    for (const e of entries) {
      if (f && !e.path.toLowerCase().includes(f)) continue;
      const shown = e.is_secret ? (e.populated ? '•••••• (secret, set)' : '(secret, unset)') : ZC.value(e.value);
      const pick = el('button', { type: 'button', class: 'link' }, e.path);
      pick.addEventListener('click', () => { $('config-prop').value = e.path; $('config-value').value = e.is_secret ? '' : ZC.value(e.value); $('config-value').focus(); });
      body.appendChild(el('tr', { dataset: { prop: e.path } }, el('td', {}, pick), el('td', { class: e.is_secret ? 'secret' : '' }, shown),
        el('td', {}, e.type_hint || e.kind || '')));
    }
  }
  $('config-filter').addEventListener('input', render);
  $('config-filter-form').addEventListener('submit', (ev) => ev.preventDefault());
  $('config-edit').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const prop = $('config-prop').value.trim(), raw = $('config-value').value;
    let value;
    try { value = JSON.parse(raw); } catch (e) { value = raw; }
    err.hidden = true; $('config-value').removeAttribute('aria-invalid'); $('config-result').textContent = '';
    try {
      const r = await api('PUT', '/api/config/prop', { prop: prop, value: value });
      $('config-result').textContent = 'Set ' + (r.prop || prop) + '.';
      await load();
    } catch (e) {
      err.textContent = e.message; err.hidden = false;
      $('config-value').setAttribute('aria-invalid', 'true');
    }
  });
  await load();
});
