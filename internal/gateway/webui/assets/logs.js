// logs.js: the live tail of the daemon's events (GET /api/events, read with fetch so that the token is a
// header), filtered by text and type, paused without losing what arrives (kept up to the cap); the list keeps
// the newest MAX lines.
'use strict';
ZC.ready(function () {
  const { el, $ } = ZC;
  const MAX = 500, list = $('logs-list'), status = $('logs-status');
  let held = [];

  function matches(li) {
    const f = $('logs-filter').value.toLowerCase(), t = $('logs-type').value;
    return (!t || li.dataset.type === t) && (!f || li.textContent.toLowerCase().includes(f));
  }
  function refilter() { for (const li of list.children) li.hidden = !matches(li); }

  function line(raw, live) { // live: from the stream (false: from the history)
    let ev = null;
    try { ev = JSON.parse(raw); } catch (e) { /* shown raw */ }
    const type = ev && typeof ev.type === 'string' ? ev.type : 'log';
    const msg = ev ? (ev.message || (ev.event && (ev.event.category + '/' + ev.event.action)) || raw) : raw;
    const li = el('li', { class: 'ev ' + type, dataset: { type: type, live: live ? 'true' : 'false' } },
      el('time', {}, ev && ev.timestamp ? ZC.when(ev.timestamp) : ''), ' ', el('span', { class: 'type' }, type), ' ',
      el('span', { class: 'msg' }, String(msg).slice(0, 4000)));
    const d = el('details', {}, el('summary', {}, 'fields'), el('pre', {}, String(raw).slice(0, 16384)));
    li.appendChild(d);
    li.hidden = !matches(li);
    return li;
  }

  function add(raw, live) {
    if (live === undefined) live = true;
    if ($('logs-pause').checked) { held.push(raw); if (held.length > MAX) held.shift(); status.textContent = 'Paused: ' + held.length + ' new events held.'; return; }
    list.insertBefore(line(raw, live), list.firstChild);
    while (list.children.length > MAX) list.removeChild(list.lastChild);
  }

  $('logs-pause').addEventListener('change', () => {
    if (!$('logs-pause').checked) { const h = held; held = []; h.forEach(raw => add(raw, true)); status.textContent = 'Live.'; }
  });
  $('logs-filter').addEventListener('input', refilter);
  $('logs-type').addEventListener('change', refilter);
  $('logs-controls').addEventListener('submit', (ev) => ev.preventDefault());

  // The recent events first (oldest first, so the newest ends on top), then the live stream.
  ZC.api('GET', '/api/events/history').then(r => {
    for (const ev of r.events || []) add(JSON.stringify(ev), false);
  }).catch(() => { /* the live tail still runs */ }).finally(() => connect());

  let backoff = 1000;
  async function connect() {
    try {
      await ZC.stream('/api/events', undefined, (raw) => add(raw, true), () => { status.textContent = 'Live.'; backoff = 1000; document.documentElement.dataset.stream = 'open'; });
      status.textContent = 'The stream ended; reconnecting…';
    } catch (e) {
      status.textContent = 'Not connected: ' + e.message;
      if (e.status === 401 || e.status === 403) return;
    }
    document.documentElement.dataset.stream = 'closed';
    setTimeout(connect, backoff); backoff = Math.min(backoff * 2, 30000);
  }
});
