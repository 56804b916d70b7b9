'use strict';
ZC.ready(async function () {
  const { el, $, api } = ZC;
  async function load(q) {
    const box = ZC.clear($('memory-list'));
    const r = await api('GET', '/api/memory' + (q ? '?' + new URLSearchParams({ query: q }) : ''));
    const list = r.entries || r.memories || r.results || (Array.isArray(r) ? r : []);
    if (!list.length) { box.appendChild(el('p', { class: 'empty' }, 'No memory entries.')); return; }
    for (const m of list) {
      const edit = el('button', { type: 'button' }, 'Edit');
      edit.addEventListener('click', () => { $('memory-key').value = m.key; $('memory-content').value = m.content || ''; $('memory-category').value = m.category || ''; $('memory-content').focus(); });
      const forget = el('button', { type: 'button', class: 'danger' }, 'Forget');
      forget.addEventListener('click', async () => {
        if (!confirm('Forget ' + m.key + '?')) return;
        try { await api('DELETE', '/api/memory/' + encodeURIComponent(m.key)); load($('memory-q').value.trim()); } catch (e) { ZC.showError(e); }
      });
      box.appendChild(el('article', { class: 'card', dataset: { key: m.key } }, el('h2', {}, m.key),
        el('p', { class: 'note' }, String(m.category || ''), ' ', ZC.when(m.timestamp || m.updated_at || m.created_at)),
        el('pre', {}, String(m.content || '').slice(0, 20000)), edit, ' ', forget));
    }
  }
  $('memory-search').addEventListener('submit', (ev) => { ev.preventDefault(); load($('memory-q').value.trim()).catch(e => ZC.showError(e)); });
  $('memory-store').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const body = { key: $('memory-key').value.trim(), content: $('memory-content').value };
    if ($('memory-category').value.trim()) body.category = $('memory-category').value.trim();
    try { await api('POST', '/api/memory', body); $('memory-result').textContent = 'Saved ' + body.key + '.'; load(''); } catch (e) { $('memory-result').textContent = 'Not saved: ' + e.message; }
  });
  await load('');
});
