'use strict';
ZC.ready(async function () {
  const { el, $, api } = ZC;
  const opts = await api('GET', '/api/config/agent-options');
  const box = $('agents-list');
  for (const a of opts.agents || []) {
    const card = el('article', { class: 'card', dataset: { agent: a } }, el('h2', {}, a), el('a', { href: ZC.prefix + '/ui/chat?' + new URLSearchParams({ agent: a }) }, 'Chat'));
    box.appendChild(card);
    api('GET', '/api/agents/' + encodeURIComponent(a) + '/skills').then(r => {
      const skills = r.skills || [];
      card.appendChild(el('p', {}, 'Skills: ' + (skills.length ? skills.map(s => s.name || ZC.value(s)).join(', ') : 'none')));
    }).catch(e => card.appendChild(el('p', { class: 'note' }, 'Skills: ' + e.message)));
  }
  try {
    const p = await api('GET', '/api/personality');
    $('agents-identity').appendChild(ZC.tree(p));
  } catch (e) { $('agents-identity').appendChild(el('p', { class: 'note' }, e.message)); }
});
