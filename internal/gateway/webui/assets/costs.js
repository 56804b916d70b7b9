// costs.js: GET /api/cost as totals and bar charts (SVG built here as DOM nodes), and the budgets from config.
'use strict';
ZC.ready(async function () {
  const { el, $, api } = ZC;
  const SVG = 'http://www.w3.org/2000/svg';
  const usd = (v) => '$' + (Number(v) || 0).toFixed(4);
  function s(tag, attrs, text) {
    const n = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) n.setAttribute(k, String(v));
    if (text !== undefined) n.textContent = text;
    return n;
  }
  // chart is a horizontal bar chart of rows [{label, value}], largest first.
  function chart(rows, id) {
    if (!rows.length) return el('p', { class: 'empty' }, 'No spend recorded.');
    const W = 600, bar = 22, gap = 6, labelW = 200, H = rows.length * (bar + gap);
    const max = Math.max(...rows.map(r => r.value), 1e-12);
    const svg = s('svg', { viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-labelledby': id + '-t', width: '100%', id: id + '-svg' });
    svg.appendChild(s('title', { id: id + '-t' }, rows.map(r => r.label + ' ' + usd(r.value)).join(', ')));
    rows.forEach((r, i) => {
      const y = i * (bar + gap), w = Math.max(1, (W - labelW - 90) * r.value / max);
      const g = s('g', { 'data-label': r.label, 'data-value': r.value.toFixed(6) });
      g.appendChild(s('text', { x: 0, y: y + bar * 0.7, class: 'lbl' }, r.label.slice(0, 28)));
      g.appendChild(s('rect', { x: labelW, y: y, width: w, height: bar, class: 'bar' }));
      g.appendChild(s('text', { x: labelW + w + 6, y: y + bar * 0.7, class: 'val' }, usd(r.value)));
      svg.appendChild(g);
    });
    return svg;
  }
  const rows = (m, key) => Object.values(m || {}).map(x => ({ label: String(x[key] || ''), value: Number(x.cost_usd) || 0 }));

  const r = await api('GET', '/api/cost');
  const c = r.cost || {};
  const total = Object.values(c.by_day || {}).reduce((a, d) => a + (Number(d.cost_usd) || 0), 0);
  const dl = $('costs-totals');
  for (const [k, v, id] of [['Total (all records)', usd(total), 'cost-total'], ['Today (UTC)', usd(c.daily_cost_usd), 'cost-daily'],
    ['This month (UTC)', usd(c.monthly_cost_usd), 'cost-monthly'], ['Requests', String(c.request_count || 0), 'cost-requests'],
    ['Tokens', String(c.total_tokens || 0), 'cost-tokens']]) {
    dl.appendChild(el('dt', {}, k)); dl.appendChild(el('dd', { id: id }, v));
  }
  if ((c.unpriced_models || []).length) dl.appendChild(el('dd', { class: 'note' }, 'Recorded without a price: ' + c.unpriced_models.join(', ')));
  const days = rows(c.by_day, 'day').sort((a, b) => a.label < b.label ? -1 : 1);
  $('costs-day').appendChild(chart(days, 'day'));
  $('costs-model').appendChild(chart(rows(c.by_model, 'model').sort((a, b) => b.value - a.value), 'model'));
  $('costs-agent').appendChild(chart(rows(c.by_agent, 'agent_alias').sort((a, b) => b.value - a.value), 'agent'));

  try {
    const cfg = await api('GET', '/api/config/list?prefix=cost');
    const get = (p) => ((cfg.entries || []).find(e => e.path === p) || {}).value;
    const box = $('costs-budget');
    for (const [label, p, spent] of [['Daily', 'cost.daily_limit_usd', c.daily_cost_usd], ['Monthly', 'cost.monthly_limit_usd', c.monthly_cost_usd]]) {
      const lim = parseFloat(get(p));
      if (!(lim > 0)) { box.appendChild(el('p', {}, label + ' budget: none set (' + p + ').')); continue; }
      const pct = Math.min(100, 100 * (Number(spent) || 0) / lim);
      box.appendChild(el('p', {}, el('label', { for: 'budget-' + label }, label + ' budget ' + usd(lim) + ': ' + pct.toFixed(1) + '% used '),
        el('meter', { id: 'budget-' + label, min: 0, max: 100, low: 75, high: 90, optimum: 0, value: pct.toFixed(1) })));
    }
  } catch (e) { /* budgets need config:read */ }
  document.documentElement.dataset.loaded = 'costs';
});
