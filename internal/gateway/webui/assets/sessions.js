// sessions.js: the session list a page at a time (limit and offset: the daemon pages it), full-text search,
// a transcript opened in place, delete; the page refreshes every few seconds while visible, so running turns
// show live.
'use strict';
ZC.ready(async function () {
  const { el, $, api } = ZC;
  const PAGE = 50;
  const q = new URLSearchParams(location.search);
  let query = q.get('q') || '', page = Math.max(0, parseInt(q.get('page') || '0', 10) || 0);
  $('sessions-q').value = query;
  const body = $('sessions-table').tBodies[0];

  async function load() {
    const p = new URLSearchParams({ limit: String(PAGE + 1), offset: String(page * PAGE) });
    if (query) p.set('query', query);
    const r = await api('GET', '/api/sessions?' + p);
    const rows = (r.sessions || []).slice(0, PAGE);
    const more = (r.sessions || []).length > PAGE;
    ZC.clear(body);
    for (const s of rows) {
      const openB = el('button', { type: 'button' }, 'Transcript');
      openB.addEventListener('click', () => transcript(s.session_id));
      const del = el('button', { type: 'button', class: 'danger' }, 'Delete');
      del.addEventListener('click', async () => {
        if (!confirm('Delete session ' + s.session_id + ' and its messages?')) return;
        try { await api('DELETE', '/api/sessions/' + encodeURIComponent(s.session_id)); load(); } catch (e) { ZC.showError(e); }
      });
      const chat = el('a', { href: ZC.prefix + '/ui/chat?' + new URLSearchParams({ agent: s.agent_alias || '', session: s.session_id }) }, s.name || s.session_id);
      body.appendChild(el('tr', { dataset: { session: s.session_id, state: s.state } },
        el('td', {}, chat), el('td', {}, s.agent_alias || s.channel_id || ''), el('td', {}, String(s.message_count)),
        el('td', {}, ZC.when(s.last_activity)), el('td', { class: 'state' }, s.state), el('td', {}, openB, ' ', del)));
    }
    if (!rows.length) body.appendChild(el('tr', {}, el('td', { colspan: 6, class: 'empty' }, query ? 'No session matches.' : 'No sessions yet.')));
    $('sessions-page').textContent = 'Page ' + (page + 1) + (query ? ' of matches for “' + query + '”' : '');
    $('sessions-prev').disabled = page === 0;
    $('sessions-next').disabled = !more;
    document.documentElement.dataset.loaded = 'sessions';
  }

  async function transcript(id) {
    const box = ZC.clear($('transcript'));
    const r = await api('GET', '/api/sessions/' + encodeURIComponent(id) + '/messages?limit=200');
    box.appendChild(el('p', {}, 'Session ', el('code', {}, id), ': ' + r.total + ' messages' + (r.has_older ? ' (latest shown)' : '') + '.'));
    for (const m of r.messages || []) {
      const b = el('div', { class: 'body' });
      b.appendChild(m.role === 'assistant' ? ZCMarkdown.render(m.content) : document.createTextNode(m.content));
      box.appendChild(el('article', { class: 'msg ' + m.role }, el('h3', {}, m.role + ' · ' + ZC.when(m.created_at)), b));
    }
  }

  function go() {
    const p = new URLSearchParams();
    if (query) p.set('q', query);
    if (page) p.set('page', String(page));
    history.replaceState(null, '', location.pathname + (p.toString() ? '?' + p : ''));
    load().catch(e => ZC.showError(e));
  }
  $('sessions-search').addEventListener('submit', (ev) => { ev.preventDefault(); query = $('sessions-q').value.trim(); page = 0; go(); });
  $('sessions-prev').addEventListener('click', () => { if (page > 0) { page--; go(); } });
  $('sessions-next').addEventListener('click', () => { page++; go(); });
  await load();
  // Every 3 s while the page is visible: a turn started elsewhere shows as running, and an ended one as idle.
  setInterval(() => { if (!document.hidden) load().catch(() => {}); }, 3000);
});
