// agents.js: the agents with their skills, and each agent's identity files (personality/list): open one to
// read it, edit and save it (PUT /api/personality/{file}?agent=).
'use strict';
ZC.ready(async function () {
  const { el, $, api } = ZC;
  const opts = await api('GET', '/api/config/agent-options');
  const box = $('agents-list');
  const pick = $('agents-pick');
  for (const a of opts.agents || []) {
    const card = el('article', { class: 'card', dataset: { agent: a } }, el('h2', {}, a), el('a', { href: ZC.prefix + '/ui/chat?' + new URLSearchParams({ agent: a }) }, 'Chat'));
    box.appendChild(card);
    pick.appendChild(el('option', { value: a }, a));
    api('GET', '/api/agents/' + encodeURIComponent(a) + '/skills').then(r => {
      const skills = r.skills || [];
      card.appendChild(el('p', {}, 'Skills: ' + (skills.length ? skills.map(s => s.name || ZC.value(s)).join(', ') : 'none')));
    }).catch(e => card.appendChild(el('p', { class: 'note' }, 'Skills: ' + e.message)));
  }
  const q = (a) => '?' + new URLSearchParams({ agent: a });
  const editor = $('agents-editor'), text = $('agents-content'), status = $('agents-status');
  async function openFile(a, f) {
    const r = await api('GET', '/api/personality/' + encodeURIComponent(f) + q(a));
    editor.hidden = false;
    editor.dataset.agent = a; editor.dataset.file = f;
    $('agents-file').textContent = a + ' / ' + f + (r.exists ? '' : ' (new)') + (r.truncated ? ' — longer than the prompt keeps' : '');
    text.value = r.content || '';
    status.textContent = '';
  }
  async function files() {
    const a = pick.value;
    const list = ZC.clear($('agents-identity'));
    if (!a) return;
    const r = await api('GET', '/api/personality' + q(a));
    list.appendChild(el('ul', {}, (r.files || []).map(f => {
      const b = el('button', { type: 'button', dataset: { file: f.filename } }, f.filename);
      b.addEventListener('click', () => openFile(a, f.filename).catch(e => ZC.showError(e)));
      return el('li', { dataset: { file: f.filename, exists: String(f.exists) } }, b, ' ', f.exists ? f.size + ' bytes' : 'not written yet');
    })));
    document.documentElement.dataset.loaded = 'agents';
  }
  pick.addEventListener('change', () => { editor.hidden = true; files().catch(e => ZC.showError(e)); });
  editor.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    try {
      const r = await api('PUT', '/api/personality/' + encodeURIComponent(editor.dataset.file) + q(editor.dataset.agent), { content: text.value });
      status.textContent = 'Saved ' + editor.dataset.file + ' (' + r.bytes_written + ' bytes).';
      await files();
    } catch (e) { status.textContent = 'Not saved: ' + e.message; }
  });
  await files();
});
