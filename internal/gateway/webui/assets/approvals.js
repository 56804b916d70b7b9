// approvals.js: the SOP runs waiting at a gate (owner only: /admin/sop/pending) with approve and deny, and the
// running turns (their tool approvals are answered in the session's chat, where the request is shown).
'use strict';
ZC.ready(async function () {
  const { el, $, api } = ZC;
  async function sop() {
    const box = ZC.clear($('approvals-sop'));
    try {
      const r = await api('GET', '/admin/sop/pending');
      const runs = r.pending || r.runs || (Array.isArray(r) ? r : []);
      if (!runs.length) { box.appendChild(el('p', { class: 'empty' }, 'No SOP run is waiting.')); return; }
      for (const run of runs) {
        const id = run.run_id || run.id;
        const row = el('div', { class: 'approval', dataset: { run: id } }, ZC.tree(run));
        for (const [path, label] of [['/admin/sop/approve', 'Approve'], ['/admin/sop/deny', 'Deny']]) {
          const b = el('button', { type: 'button' }, label);
          b.addEventListener('click', async () => { try { await api('POST', path, { run_id: id }); sop(); } catch (e) { ZC.showError(e); } });
          row.appendChild(b);
        }
        box.appendChild(row);
      }
    } catch (e) { box.appendChild(el('p', { class: 'note' }, 'SOP gates: ' + e.message)); }
  }
  async function running() {
    const box = ZC.clear($('approvals-running'));
    try {
      const r = await api('GET', '/api/sessions/running');
      const list = r.sessions || [];
      if (!list.length) { box.appendChild(el('p', { class: 'empty' }, 'No turn is running.')); return; }
      box.appendChild(el('ul', {}, list.map(s => el('li', {}, el('a', { href: ZC.prefix + '/ui/chat?' + new URLSearchParams({ agent: s.agent_alias || '', session: s.session_id }) }, s.session_id), ' ', s.agent_alias || ''))));
    } catch (e) { box.appendChild(el('p', { class: 'note' }, e.message)); }
  }
  await Promise.all([sop(), running()]);
  setInterval(() => { if (!document.hidden) { sop(); running(); } }, 5000);
});
