'use strict';
ZC.ready(async function () {
  const { el, $, api } = ZC;
  async function run(method) {
    const box = ZC.clear($('doctor-findings'));
    box.appendChild(el('p', {}, 'Running…'));
    const r = await api(method, '/api/doctor', method === 'POST' ? {} : undefined);
    ZC.clear(box);
    const list = r.findings || r.checks || r.results || [];
    if (!list.length) { box.appendChild(ZC.tree(r)); return; }
    box.appendChild(el('ul', { class: 'findings' }, list.map(f => el('li', { class: 'sev-' + (f.severity || f.status || ''), dataset: { severity: f.severity || f.status || '' } },
      el('strong', {}, String(f.severity || f.status || '')), ' ', el('span', {}, String(f.category ? '[' + f.category + '] ' : '') + String(f.message || f.title || '')),
      f.fix || f.hint ? el('p', { class: 'fix' }, 'Fix: ', String(f.fix || f.hint)) : null))));
  }
  $('doctor-run').addEventListener('click', () => run('POST').catch(e => ZC.showError(e)));
  await run('GET');
});
