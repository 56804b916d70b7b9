// approvals.js: everything waiting on a person (GET /api/approvals): the tool calls of every session this
// browser may see (the owner: all of them) and the SOP gates, each with the decisions the daemon offers it,
// answered by POST /api/approvals/{id} (Edit and run sends the edited arguments). The list is pushed by
// GET /api/approvals/events (Server-Sent Events over fetch, the token in a header) as it changes; while that
// stream is down the page polls every 2 s and tries the stream again every 5 s. The running turns are listed
// below, linked to their chat, refreshed every 5 s while visible.
'use strict';
ZC.ready(async function () {
  const { el, $, api } = ZC;
  const labels = { allow_once: 'Allow once', allow_always: 'Always allow', reject: 'Deny', reject_with_edit: 'Edit and run\u2026', approve: 'Approve', deny: 'Deny' };
  let shown = null; // the ids and decisions on the page: redrawn only when they change (a click is never lost)

  function card(a) {
    const row = el('article', { class: 'approval', role: 'group', 'aria-label': 'Approval ' + a.id, dataset: { id: a.id, kind: a.kind } });
    if (a.kind === 'tool') {
      const chat = el('a', { href: ZC.prefix + '/ui/chat?' + new URLSearchParams({ agent: a.agent_alias || '', session: a.session_id }) }, a.session_id);
      row.appendChild(el('h3', {}, 'Tool call: ', el('code', {}, a.tool_name), ' (' + (a.risk || '?') + ' risk)'));
      row.appendChild(el('p', {}, 'Agent ' + (a.agent_alias || '—') + ', session ', chat, ', asked ' + ZC.when(a.requested_at) + ', denied unanswered at ' + ZC.when(a.expires_at)));
      row.appendChild(el('pre', {}, a.arguments_summary || ''));
      if (a.approver === 'owner') row.appendChild(el('p', { class: 'note' }, 'Only the owner may allow this call.'));
    } else {
      row.appendChild(el('h3', {}, 'SOP ', el('code', {}, a.sop_name), ' waits at step ' + a.step + ' of ' + a.total_steps + ' (' + (a.gate_kind || 'approval') + ')'));
      row.appendChild(el('p', {}, 'Run ', el('code', {}, a.run_id), a.waiting_since ? ', waiting since ' + ZC.when(a.waiting_since) : ''));
    }
    const err = el('p', { class: 'error', role: 'alert', hidden: true });
    let edit = null;
    for (const d of a.decisions || []) {
      const b = el('button', { type: 'button', class: d === 'reject' || d === 'deny' ? 'danger' : '', dataset: { decision: d } }, labels[d] || d);
      if (d === 'reject_with_edit') {
        // Not an answer yet: it opens the form, whose submit sends the edited arguments.
        edit = ZC.editForm(a.arguments, async (args) => {
          row.querySelectorAll('button').forEach(x => { x.disabled = true; });
          try {
            await api('POST', '/api/approvals/' + encodeURIComponent(a.id), { decision: d, replacement: args });
            row.dataset.answered = d;
            refresh();
          } catch (e) { row.querySelectorAll('button').forEach(x => { x.disabled = false; }); throw e; }
        });
        b.setAttribute('aria-expanded', 'false');
        b.addEventListener('click', () => {
          edit.hidden = !edit.hidden; b.setAttribute('aria-expanded', String(!edit.hidden));
          if (!edit.hidden) edit.querySelector('textarea').focus();
        });
      } else {
        b.addEventListener('click', async () => {
          row.querySelectorAll('button').forEach(x => { x.disabled = true; });
          try {
            await api('POST', '/api/approvals/' + encodeURIComponent(a.id), { decision: d });
            row.dataset.answered = d;
            refresh();
          } catch (e) {
            err.textContent = e.message; err.hidden = false;
            row.querySelectorAll('button').forEach(x => { x.disabled = false; });
          }
        });
      }
      row.appendChild(b);
      row.appendChild(document.createTextNode(' '));
    }
    if (edit) row.appendChild(edit);
    if (!(a.decisions || []).length) row.appendChild(el('p', { class: 'note' }, 'This browser may not answer it.'));
    row.appendChild(err);
    return row;
  }

  // Every list shown is numbered when it was asked for (a fetch) or arrived (a pushed frame): an answer to a
  // fetch begun before a list already shown is stale and dropped, so a slow fetch never hides a newer push.
  let asked = 0, drawn = 0;
  async function pending() {
    const mine = ++asked;
    let r;
    try { r = await api('GET', '/api/approvals'); } catch (e) {
      if (mine > drawn) { ZC.clear($('approvals-list')).appendChild(el('p', { class: 'note' }, e.message)); shown = null; }
      return;
    }
    if (mine < drawn) return;
    drawn = mine;
    render(r);
  }

  function render(r) {
    const box = $('approvals-list');
    const list = r.approvals || [];
    const key = JSON.stringify(list.map(a => [a.id, a.decisions]));
    if (key !== shown) {
      shown = key;
      ZC.clear(box);
      if (!list.length) box.appendChild(el('p', { class: 'empty' }, 'Nothing is waiting on you.'));
      for (const a of list) box.appendChild(card(a));
    }
    $('approvals-count').textContent = String(list.length);
    const gates = { not_permitted: 'SOP gates are not listed: this browser lacks sops:read.', disabled: 'No SOP engine runs: no SOP gates.' }[r.sop_gates];
    const note = $('approvals-sopnote');
    note.textContent = gates || ''; note.hidden = !gates;
    document.documentElement.dataset.loaded = 'approvals';
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

  // watch keeps the push stream open; while it is down (refused, cut, not yet open) mode is 'poll'.
  const root = document.documentElement;
  async function watch() {
    try {
      await ZC.stream('/api/approvals/events', undefined, (data) => {
        let r; try { r = JSON.parse(data); } catch (e) { return; }
        if (typeof r.error === 'string') { ZC.showError(new Error(r.error)); return; }
        root.dataset.push = 'stream';
        drawn = ++asked;
        render(r);
      });
    } catch (e) { /* polled meanwhile */ }
    root.dataset.push = 'poll';
    if (root.dataset.auth === 'lost') return;
    pending(); // what changed while the stream was down
    setTimeout(watch, 5000);
  }

  function refresh() { return Promise.all([pending(), running()]); }
  root.dataset.push = 'poll';
  await refresh();
  watch();
  setInterval(() => { if (!document.hidden && root.dataset.push !== 'stream') pending(); }, 2000);
  setInterval(() => { if (!document.hidden) running(); }, 5000);
  document.addEventListener('visibilitychange', () => { if (!document.hidden) refresh(); });
});
