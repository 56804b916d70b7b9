// sops.js: the procedures (start one by hand) and their runs, newest first; a run waiting at a gate is
// approved or denied here (POST /api/approvals/{id}, the SOP's own rules). Refreshed every 3 s while visible.
'use strict';
ZC.ready(async function () {
  const { el, $, api } = ZC;
  async function defs() {
    const box = ZC.clear($('sops-list'));
    let r;
    try { r = await api('GET', '/api/sops'); } catch (e) { box.appendChild(el('p', { class: 'note' }, e.message)); return; }
    const list = r.sops || (Array.isArray(r) ? r : []);
    if (!list.length) { box.appendChild(el('p', { class: 'empty' }, 'No SOPs.')); return; }
    for (const s of list) {
      const start = el('button', { type: 'button', dataset: { start: s.name } }, 'Start a run');
      start.addEventListener('click', async () => {
        try { const res = await api('POST', '/api/sops/' + encodeURIComponent(s.name) + '/run', {}); $('sops-result').textContent = 'Started run ' + (res.run_id || '') + '.'; await runs(); } catch (e) { ZC.showError(e); }
      });
      box.appendChild(el('article', { class: 'card', dataset: { sop: s.name } }, el('h3', {}, s.name), el('p', {}, String(s.description || '')),
        el('p', {}, 'Mode: ' + String(s.execution_mode || '') + ' · steps: ' + String((s.steps || []).length || s.step_count || '')), start));
    }
  }
  let shown = '';
  async function runs() {
    let r, gates = {};
    try { r = await api('GET', '/api/sops/runs'); } catch (e) { ZC.clear($('sops-runs')).appendChild(el('p', { class: 'note' }, e.message)); return; }
    try { for (const a of (await api('GET', '/api/approvals')).approvals || []) if (a.kind === 'sop') gates[a.run_id] = a; } catch (e) { /* no gate buttons */ }
    const list = r.runs || (Array.isArray(r) ? r : []);
    const key = JSON.stringify([list.map(x => [x.run_id, x.status, x.current_step]), Object.keys(gates)]);
    if (key === shown) return;
    shown = key;
    const box = ZC.clear($('sops-runs'));
    if (!list.length) { box.appendChild(el('p', { class: 'empty' }, 'No runs yet.')); }
    for (const x of list) {
      const row = el('article', { class: 'card', dataset: { run: x.run_id, status: x.status } },
        el('p', {}, el('code', {}, x.run_id), ' ', String(x.sop_name || ''), ' · ', el('strong', {}, String(x.status)), ' · step ' + String(x.current_step || 0) + ' of ' + String(x.total_steps || 0)));
      const g = gates[x.run_id];
      for (const d of g ? g.decisions : []) {
        const b = el('button', { type: 'button', class: d === 'deny' ? 'danger' : '', dataset: { decision: d } }, d === 'approve' ? 'Approve' : 'Deny');
        b.addEventListener('click', async () => {
          try { const res = await api('POST', '/api/approvals/' + encodeURIComponent(g.id), { decision: d }); $('sops-result').textContent = 'Run ' + x.run_id + ': ' + (res.outcome || d) + '.'; shown = ''; await runs(); } catch (e) { ZC.showError(e); }
        });
        row.appendChild(b); row.appendChild(document.createTextNode(' '));
      }
      box.appendChild(row);
    }
    document.documentElement.dataset.loaded = 'sops';
  }
  await Promise.all([defs(), runs()]);
  setInterval(() => { if (!document.hidden) runs(); }, 3000);
});
