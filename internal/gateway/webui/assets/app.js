// app.js: what every dashboard page shares. The token lives in localStorage only; every request sends it as
// "Authorization: Bearer", never in a URL. Text from the daemon reaches the page only as text nodes (el()).
'use strict';
window.ZC = (function () {
  const root = document.documentElement;
  const prefix = root.dataset.prefix || '';
  const KEY = 'zeroclaw.token', DEV = 'zeroclaw.device';

  function token() { try { return localStorage.getItem(KEY) || ''; } catch (e) { return ''; } }
  function device() { try { return localStorage.getItem(DEV) || ''; } catch (e) { return ''; } }
  function setToken(t, id) { localStorage.setItem(KEY, t); if (id) localStorage.setItem(DEV, id); }
  function forget() { localStorage.removeItem(KEY); localStorage.removeItem(DEV); }

  // lost marks the page as no longer authorized (no token, or the daemon refused it).
  function lost() {
    root.dataset.auth = 'lost';
    const b = document.getElementById('auth-lost');
    if (b) b.hidden = false;
    const lo = document.getElementById('logout');
    if (lo) lo.hidden = true;
  }

  // api calls a gateway route; a non-2xx answer throws an Error whose message is the gateway's {"error"}.
  async function api(method, path, body) {
    const h = { 'Accept': 'application/json' };
    const t = token();
    if (t) h['Authorization'] = 'Bearer ' + t;
    const init = { method: method, headers: h, credentials: 'omit', cache: 'no-store', redirect: 'error' };
    if (body !== undefined) { h['Content-Type'] = 'application/json'; init.body = JSON.stringify(body); }
    const r = await fetch(prefix + path, init);
    let data = null;
    const text = await r.text();
    if (text) { try { data = JSON.parse(text); } catch (e) { data = { error: text.slice(0, 500) }; } }
    if (r.status === 401) lost();
    if (!r.ok) {
      let msg = 'HTTP ' + r.status;
      if (data && typeof data.error === 'string') msg = data.error;
      else if (data && data.error && typeof data.error.message === 'string') msg = data.error.message;
      else if (data && typeof data.message === 'string') msg = data.message;
      const e = new Error(msg); e.status = r.status; e.data = data; throw e;
    }
    return data;
  }

  // el builds an element: attrs are properties or attributes (never an on* handler, never innerHTML);
  // children are nodes or strings (text nodes).
  function el(tag, attrs, ...children) {
    const n = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (/^on/i.test(k) || k === 'innerHTML' || k === 'outerHTML') throw new Error('el: refused attribute ' + k);
      if (k === 'class') n.className = v;
      else if (k === 'text') n.textContent = String(v);
      else if (k === 'dataset') Object.assign(n.dataset, v);
      else n.setAttribute(k, v === true ? '' : String(v));
    }
    append(n, children);
    return n;
  }
  function append(n, children) {
    for (const c of children.flat(Infinity)) {
      if (c === undefined || c === null || c === false) continue;
      n.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
    }
    return n;
  }
  function clear(n) { while (n.firstChild) n.removeChild(n.firstChild); return n; }
  function $(id) { return document.getElementById(id); }

  function showError(err, where) {
    const p = where || $('page-error');
    if (!p) return;
    p.textContent = err ? String(err.message || err) : '';
    p.hidden = !err;
  }

  // value is v as text: JSON for objects, "" for null.
  function value(v) {
    if (v === null || v === undefined) return '';
    if (typeof v === 'object') return JSON.stringify(v);
    return String(v);
  }

  // table renders rows (objects) with cols ([key, label]) or every key of the first row.
  function table(rows, cols, caption) {
    if (!rows || rows.length === 0) return el('p', { class: 'empty' }, 'Nothing here.');
    cols = cols || Object.keys(rows[0]).map(k => [k, k]);
    return el('table', {}, caption ? el('caption', { class: 'sr' }, caption) : null,
      el('thead', {}, el('tr', {}, cols.map(c => el('th', { scope: 'col' }, c[1])))),
      el('tbody', {}, rows.map(r => el('tr', {}, cols.map(c => el('td', {}, value(r[c[0]])))))));
  }

  // tree renders any JSON value as nested definition lists.
  function tree(v) {
    if (Array.isArray(v)) {
      if (v.length && v.every(x => x && typeof x === 'object' && !Array.isArray(x))) return table(v);
      return el('ul', {}, v.map(x => el('li', {}, tree(x))));
    }
    if (v && typeof v === 'object') {
      return el('dl', { class: 'tree' }, Object.entries(v).map(([k, x]) => [el('dt', {}, k), el('dd', {}, tree(x))]));
    }
    return document.createTextNode(value(v));
  }

  function when(iso) {
    if (!iso) return '';
    const d = new Date(iso);
    return isNaN(d) ? String(iso) : d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  }

  // ready runs fn once the page is parsed and the token checked: with no token, the page shows that it is not
  // paired (the pair page runs regardless).
  function ready(fn, opts) {
    const go = () => {
      const lo = $('logout');
      if (token() && lo) { lo.hidden = false; lo.addEventListener('click', logout); }
      if (!token() && !(opts && opts.public)) { lost(); return; }
      Promise.resolve().then(fn).catch(e => showError(e));
    };
    if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', go); else go();
  }

  // logout revokes this browser's device and forgets the token, whatever the daemon answered.
  async function logout() {
    const id = device();
    try { if (id) await api('DELETE', '/api/devices/' + encodeURIComponent(id)); } catch (e) { /* forgotten below */ }
    forget();
    location.assign(prefix + '/ui/pair');
  }

  // stream reads an SSE response body (fetch, so the token goes in a header), calling onData per data line.
  async function stream(path, signal, onData, onOpen) {
    const h = { 'Accept': 'text/event-stream', 'Authorization': 'Bearer ' + token() };
    const r = await fetch(prefix + path, { headers: h, credentials: 'omit', cache: 'no-store', signal: signal });
    if (r.status === 401) lost();
    if (!r.ok) { const e = new Error('event stream: HTTP ' + r.status); e.status = r.status; throw e; }
    if (onOpen) onOpen();
    const reader = r.body.getReader();
    const dec = new TextDecoder();
    let buf = '';
    for (;;) {
      const { value: chunk, done } = await reader.read();
      if (done) return;
      buf += dec.decode(chunk, { stream: true });
      if (buf.length > 4 << 20) buf = buf.slice(-(1 << 20)); // a frame never grows past this
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const frame = buf.slice(0, i); buf = buf.slice(i + 2);
        const data = frame.split('\n').filter(l => l.startsWith('data: ')).map(l => l.slice(6)).join('\n');
        if (data) onData(data);
      }
    }
  }

  // editForm is the "edit and run" form of a tool call's approval (reject_with_edit): a labelled text box
  // holding args (the call's arguments) as JSON, and Run edited call; onSubmit gets the edited arguments (a
  // JSON object) and may throw to show its error beside the box. The text is only ever the box's value.
  let edits = 0;
  function editForm(args, onSubmit) {
    const id = 'edit-args-' + (++edits);
    const box = el('textarea', { id: id, rows: '6', maxlength: '1000000', spellcheck: 'false', 'aria-describedby': id + '-err' });
    box.value = JSON.stringify(args && typeof args === 'object' ? args : {}, null, 2);
    const err = el('p', { id: id + '-err', class: 'error', role: 'alert', hidden: true });
    const form = el('form', { class: 'edit', hidden: true },
      el('label', { for: id }, 'Arguments to run instead (JSON)'), box,
      el('button', { type: 'submit', dataset: { decision: 'edited' } }, 'Run edited call'), err);
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      let v;
      try { v = JSON.parse(box.value); } catch (e) { v = undefined; }
      if (!v || typeof v !== 'object' || Array.isArray(v)) {
        box.setAttribute('aria-invalid', 'true'); err.textContent = 'The arguments must be one JSON object.'; err.hidden = false; box.focus(); return;
      }
      box.removeAttribute('aria-invalid'); err.hidden = true;
      try { await onSubmit(v); } catch (e) { err.textContent = String(e.message || e); err.hidden = false; }
    });
    return form;
  }

  function wsURL(path) {
    return (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + prefix + path;
  }

  return { prefix, token, device, setToken, forget, api, el, append, clear, $, showError, value, table, tree,
    when, ready, logout, stream, wsURL, lost, editForm };
})();
