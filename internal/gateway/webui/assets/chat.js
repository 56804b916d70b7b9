// chat.js: one /ws/chat connection (the token as the "bearer.<token>" subprotocol), its frames shown as they
// arrive: the answer's chunks (Markdown rendered by md.js once whole, plain text while streaming), tool calls
// and results, approval requests answered by buttons, questions (ask_user: one choice, several, or free text)
// answered by a small form; cancel aborts the session's turn.
'use strict';
ZC.ready(async function () {
  const { el, $, api } = ZC;
  const log = $('chat-log'), status = $('chat-status'), input = $('chat-input');
  const send = $('chat-send'), cancel = $('chat-cancel');
  const agentSel = $('chat-agent'), sessSel = $('chat-session');
  let ws = null, sessionID = '', current = null, currentText = '', lastArgs = null;
  const MAX_TEXT = 1 << 20; // one answer shown at most this long

  const q = new URLSearchParams(location.search);
  const opts = await api('GET', '/api/config/agent-options');
  for (const a of opts.agents || []) agentSel.appendChild(el('option', { value: a }, a));
  if (q.get('agent')) agentSel.value = q.get('agent');
  async function loadSessions() {
    try {
      const r = await api('GET', '/api/sessions?limit=50');
      for (const s of r.sessions || []) {
        if (s.agent_alias && s.agent_alias !== agentSel.value) continue;
        sessSel.appendChild(el('option', { value: s.session_id }, (s.name || s.session_id) + ' (' + s.message_count + ')'));
      }
    } catch (e) { /* a device without sessions:read still chats */ }
    if (q.get('session')) {
      if (![...sessSel.options].some(o => o.value === q.get('session'))) sessSel.appendChild(el('option', { value: q.get('session') }, q.get('session')));
      sessSel.value = q.get('session');
    }
  }
  await loadSessions();

  function bubble(role, text) {
    const body = el('div', { class: 'body' });
    if (text) body.appendChild(role === 'user' ? document.createTextNode(text) : ZCMarkdown.render(text));
    const b = el('article', { class: 'msg ' + role, dataset: { role: role } }, el('h3', { class: 'sr' }, role), body);
    log.appendChild(b);
    while (log.children.length > 400) log.removeChild(log.firstChild); // a long session stays a bounded page
    b.scrollIntoView({ block: 'end' });
    return body;
  }

  async function history(id) {
    try {
      const r = await api('GET', '/api/sessions/' + encodeURIComponent(id) + '/messages?limit=50');
      for (const m of r.messages || []) if (m.role === 'user' || m.role === 'assistant') bubble(m.role, m.content);
    } catch (e) { /* no history shown */ }
  }

  function setBusy(busy) { cancel.disabled = !busy; }

  function frame(f) {
    switch (f.type) {
      case 'session_start':
        sessionID = f.session_id;
        document.documentElement.dataset.session = sessionID;
        status.textContent = 'Connected to session ' + sessionID + (f.resumed ? ' (resumed)' : '') + '.';
        send.disabled = false;
        if (f.resumed) history(sessionID);
        break;
      case 'chunk':
        if (!current) { current = bubble('assistant', ''); currentText = ''; }
        if (currentText.length < MAX_TEXT) currentText += String(f.content || '');
        current.textContent = currentText;
        break;
      case 'thinking':
        break;
      case 'tool_call':
        lastArgs = f.args; // the approval_request that may follow is this call's
        log.appendChild(el('details', { class: 'tool', dataset: { tool: f.name, id: f.id } },
          el('summary', {}, 'Tool call: ', el('code', {}, String(f.name))), el('pre', {}, JSON.stringify(f.args, null, 2))));
        current = null;
        break;
      case 'tool_result': {
        pendingQuestion = null;
        const d = log.querySelector('details.tool[data-id="' + CSS.escape(String(f.id)) + '"]');
        const out = el('pre', { class: 'result' }, String(f.output || '').slice(0, 65536));
        (d || log).appendChild(out);
        break;
      }
      case 'approval_request': approval(f); break;
      case 'question': question(f); break;
      case 'question_closed': {
        const box = log.querySelector('form.question[data-request="' + CSS.escape(String(f.request_id)) + '"]');
        if (box && !box.dataset.answered) { box.dataset.answered = 'closed'; box.querySelectorAll('button, input, textarea').forEach(b => { b.disabled = true; }); box.appendChild(el('p', { class: 'note' }, 'The question is no longer waiting.')); }
        break;
      }
      case 'done':
        if (!current) current = bubble('assistant', '');
        ZC.clear(current).appendChild(ZCMarkdown.render(String(f.full_response || currentText)));
        current.parentNode.dataset.done = 'true';
        current = null; currentText = '';
        status.textContent = 'Turn done (' + (f.tokens_used || 0) + ' tokens).';
        setBusy(false);
        break;
      case 'aborted':
        status.textContent = 'Turn cancelled.'; current = null; setBusy(false);
        log.appendChild(el('p', { class: 'note', dataset: { aborted: 'true' } }, 'Turn cancelled.'));
        break;
      case 'error':
        if (f.code === 'INVALID_QUESTION_RESPONSE' && pendingQuestion) { // the turn still waits: answer again
          pendingQuestion.reopen(String(f.message || ''));
          break;
        }
        status.textContent = 'Error: ' + f.message + (f.code ? ' (' + f.code + ')' : '');
        current = null; setBusy(false);
        break;
    }
  }

  function approval(f) {
    const box = el('div', { class: 'approval', role: 'group', 'aria-label': 'Approval request', dataset: { request: f.request_id } },
      el('p', {}, 'The agent wants to run ', el('code', {}, String(f.tool)), ':'),
      el('pre', {}, String(f.arguments_summary || '')));
    const send = (decision, replacement) => {
      const msg = { type: 'approval_response', request_id: f.request_id, decision: decision };
      if (replacement) msg.replacement = replacement;
      ws.send(JSON.stringify(msg));
      box.querySelectorAll('button, textarea').forEach(b => { b.disabled = true; });
      box.dataset.answered = decision;
      box.appendChild(el('p', { class: 'note' }, 'Answered: ' + decision));
    };
    const edit = ZC.editForm(lastArgs, (args) => send('edit', args));
    for (const [d, label] of [['approve', 'Approve'], ['always', 'Always approve'], ['edit', 'Edit and run\u2026'], ['deny', 'Deny']]) {
      const b = el('button', { type: 'button', dataset: { decision: d } }, label);
      if (d === 'edit') {
        b.setAttribute('aria-expanded', 'false');
        b.addEventListener('click', () => {
          edit.hidden = !edit.hidden; b.setAttribute('aria-expanded', String(!edit.hidden));
          if (!edit.hidden) edit.querySelector('textarea').focus();
        });
      } else b.addEventListener('click', () => send(d));
      box.appendChild(b);
    }
    box.appendChild(edit);
    log.appendChild(box);
    box.querySelector('button').focus();
  }

  // question shows a question of the turn as a form: radio buttons for one choice, checkboxes for several,
  // a text box otherwise; Answer sends the value(s), Decline declines. The text is the agent's, escaped.
  let pendingQuestion = null;
  function question(f) {
    const id = String(f.request_id), kind = f.kind;
    const form = el('form', { class: 'question approval', 'aria-label': 'Question from the agent', dataset: { request: id, kind: kind } },
      el('p', { class: 'ask' }, String(f.message || '')));
    const fields = el('div', { class: 'choices' });
    if (kind === 'choice' || kind === 'choices') {
      (f.choices || []).forEach((c, i) => {
        const inp = el('input', { type: kind === 'choice' ? 'radio' : 'checkbox', name: 'q-' + id, value: String(c.value), id: 'q-' + id + '-' + i });
        fields.appendChild(el('label', { for: 'q-' + id + '-' + i }, inp, ' ', String(c.label)));
      });
    } else {
      fields.appendChild(el('label', { for: 'q-' + id + '-text', class: 'sr' }, 'Your answer'));
      fields.appendChild(el('textarea', { id: 'q-' + id + '-text', rows: 2, maxlength: 65536 }));
    }
    form.appendChild(fields);
    const err = el('p', { class: 'error', role: 'alert', hidden: true });
    const ok = el('button', { type: 'submit', dataset: { action: 'accept' } }, 'Answer');
    const no = el('button', { type: 'button', class: 'danger', dataset: { action: 'decline' } }, 'Decline');
    form.append(ok, ' ', no, err);
    const lock = (on) => form.querySelectorAll('button, input, textarea').forEach(b => { b.disabled = on; });
    const reply = (msg) => { ws.send(JSON.stringify(Object.assign({ type: 'question_response', request_id: id }, msg))); lock(true); err.hidden = true; pendingQuestion = q; };
    const q = { reopen: (m) => { err.textContent = m; err.hidden = false; lock(false); delete form.dataset.answered; } };
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      if (kind === 'choice') {
        const c = form.querySelector('input:checked');
        if (!c) { q.reopen('Pick one of the choices.'); return; }
        form.dataset.answered = c.value; reply({ action: 'accept', answer: c.value });
      } else if (kind === 'choices') {
        const cs = [...form.querySelectorAll('input:checked')].map(x => x.value);
        if (!cs.length) { q.reopen('Pick at least one of the choices.'); return; }
        form.dataset.answered = cs.join(','); reply({ action: 'accept', choices: cs });
      } else {
        const v = form.querySelector('textarea').value;
        form.dataset.answered = 'text'; reply({ action: 'accept', answer: v });
      }
    });
    no.addEventListener('click', () => { form.dataset.answered = 'decline'; reply({ action: 'decline' }); });
    pendingQuestion = q;
    log.appendChild(form);
    (form.querySelector('input, textarea') || ok).focus();
  }

  function open() {
    if (ws) { ws.onclose = null; ws.close(); }
    ZC.clear(log); sessionID = ''; send.disabled = true; setBusy(false);
    const params = new URLSearchParams({ agent: agentSel.value });
    if (sessSel.value) params.set('session_id', sessSel.value);
    status.textContent = 'Connecting…';
    ws = new WebSocket(ZC.wsURL('/ws/chat?' + params), ['zeroclaw.v1', 'bearer.' + ZC.token()]);
    ws.onmessage = (ev) => { let f; try { f = JSON.parse(ev.data); } catch (e) { return; } frame(f); };
    ws.onclose = (ev) => { send.disabled = true; setBusy(false); status.textContent = 'Disconnected (' + ev.code + ').'; document.documentElement.dataset.chat = 'closed'; };
    ws.onopen = () => { document.documentElement.dataset.chat = 'open'; };
  }

  $('chat-open').addEventListener('submit', (ev) => { ev.preventDefault(); open(); });
  $('chat-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const text = input.value;
    if (!text.trim() || !ws || ws.readyState !== WebSocket.OPEN) return;
    bubble('user', text);
    ws.send(JSON.stringify({ type: 'message', content: text }));
    input.value = ''; current = null; currentText = '';
    status.textContent = 'Running…'; setBusy(true);
  });
  input.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); $('chat-form').requestSubmit(); }
  });
  cancel.addEventListener('click', async () => {
    if (!sessionID) return;
    try { await api('POST', '/api/sessions/' + encodeURIComponent(sessionID) + '/abort', {}); } catch (e) { ZC.showError(e); }
  });
  if (agentSel.value) open();
});
