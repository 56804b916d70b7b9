'use strict';
ZC.ready(async function () {
  const { el, $, api } = ZC;
  // cron/list answers a page at a time and says has_more with the next page's offset.
  const jobs = [];
  for (let offset = 0; ;) {
    const r = await api('GET', '/api/cron?limit=1000&offset=' + offset);
    jobs.push(...(r.jobs || (Array.isArray(r) ? r : [])));
    if (!r.has_more || !(r.next_offset > offset)) break;
    offset = r.next_offset;
  }
  const box = $('cron-jobs');
  if (!jobs.length) box.appendChild(el('p', { class: 'empty' }, 'No cron jobs.'));
  for (const j of jobs) {
    const hist = el('button', { type: 'button' }, 'History');
    hist.addEventListener('click', async () => {
      const out = ZC.clear($('cron-runs'));
      try {
        const rr = await api('GET', '/api/cron/' + encodeURIComponent(j.id) + '/runs');
        const runs = rr.runs || (Array.isArray(rr) ? rr : []);
        out.appendChild(runs.length ? el('ol', { class: 'timeline' }, runs.map(x => el('li', { dataset: { status: x.status || '' } },
          el('time', {}, ZC.when(x.started_at || x.start_time || x.at)), ' ', String(x.status || ''), ' ', String(x.output || x.error || '').slice(0, 500))))
          : el('p', { class: 'empty' }, 'No runs yet.'));
      } catch (e) { ZC.showError(e); }
    });
    const run = el('button', { type: 'button' }, 'Run now');
    run.addEventListener('click', async () => { try { await api('POST', '/api/cron/' + encodeURIComponent(j.id) + '/run', {}); } catch (e) { ZC.showError(e); } });
    box.appendChild(el('article', { class: 'card', dataset: { job: j.id } },
      el('h2', {}, j.name || j.id), el('p', {}, 'Agent: ' + (j.agent_alias || '—') + ' · last: ' + (j.last_status || 'never') + (j.last_run ? ' at ' + ZC.when(j.last_run) : '')), el('p', {}, 'Schedule: ', el('code', {}, j.expression || ZC.value(j.schedule)), ' · next run: ', ZC.when(j.next_run) || '—', j.enabled === false ? ' (disabled)' : ''),
      el('details', {}, el('summary', {}, 'All fields'), ZC.tree(j)), hist, ' ', run));
  }
});
