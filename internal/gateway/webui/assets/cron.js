// cron.js: the scheduled jobs with their next run and last status; add a job (a shell command or an agent
// prompt on a cron expression), run one now, pause and resume it, delete it, and read its run history.
'use strict';
ZC.ready(async function () {
  const { el, $, api } = ZC;
  try {
    const opts = await api('GET', '/api/config/agent-options');
    for (const a of opts.agents || []) $('cron-agent').appendChild(el('option', { value: a }, a));
  } catch (e) { /* the form still names an agent by hand */ }

  async function history(j) {
    const out = ZC.clear($('cron-runs'));
    out.dataset.job = j.id;
    const rr = await api('GET', '/api/cron/' + encodeURIComponent(j.id) + '/runs');
    const runs = rr.runs || (Array.isArray(rr) ? rr : []);
    out.appendChild(el('p', {}, 'Runs of ', el('code', {}, j.name || j.id), ':'));
    out.appendChild(runs.length ? el('ol', { class: 'timeline' }, runs.map(x => el('li', { dataset: { status: x.status || '', run: String(x.id) } },
      el('time', {}, ZC.when(x.started_at)), ' ', el('strong', {}, String(x.status || '')), ' ', String(x.output || '').slice(0, 500))))
      : el('p', { class: 'empty' }, 'No runs yet.'));
  }

  const act = (fn) => async (...args) => { try { await fn(...args); } catch (e) { ZC.showError(e); } };
  async function load() {
    // cron/list answers a page at a time and says has_more with the next page's offset.
    const jobs = [];
    for (let offset = 0; ;) {
      const r = await api('GET', '/api/cron?limit=1000&offset=' + offset);
      jobs.push(...(r.jobs || (Array.isArray(r) ? r : [])));
      if (!r.has_more || !(r.next_offset > offset)) break;
      offset = r.next_offset;
    }
    const box = ZC.clear($('cron-jobs'));
    if (!jobs.length) box.appendChild(el('p', { class: 'empty' }, 'No cron jobs.'));
    for (const j of jobs) {
      const hist = el('button', { type: 'button', dataset: { action: 'history' } }, 'History');
      hist.addEventListener('click', act(() => history(j)));
      const run = el('button', { type: 'button', dataset: { action: 'run' } }, 'Run now');
      run.addEventListener('click', act(async () => {
        const res = await api('POST', '/api/cron/' + encodeURIComponent(j.id) + '/run', {});
        $('cron-result').textContent = 'Ran ' + (j.name || j.id) + ': ' + (res.status || 'done') + '.';
        await load(); await history(j);
      }));
      const pause = el('button', { type: 'button', dataset: { action: j.enabled ? 'pause' : 'resume' } }, j.enabled ? 'Pause' : 'Resume');
      pause.addEventListener('click', act(async () => { await api('PATCH', '/api/cron/' + encodeURIComponent(j.id), { enabled: !j.enabled }); await load(); }));
      const del = el('button', { type: 'button', class: 'danger', dataset: { action: 'delete' } }, 'Delete');
      del.addEventListener('click', act(async () => {
        if (!confirm('Delete job ' + (j.name || j.id) + '?')) return;
        await api('DELETE', '/api/cron/' + encodeURIComponent(j.id)); await load();
      }));
      box.appendChild(el('article', { class: 'card', dataset: { job: j.id, name: j.name || '', enabled: String(j.enabled) } },
        el('h2', {}, j.name || j.id), el('p', {}, 'Agent: ' + (j.agent_alias || '—') + ' · last: ' + (j.last_status || 'never') + (j.last_run ? ' at ' + ZC.when(j.last_run) : '')),
        el('p', {}, 'Schedule: ', el('code', {}, j.expression || ZC.value(j.schedule)), ' · next run: ', ZC.when(j.next_run) || '—', j.enabled === false ? ' (paused)' : ''),
        el('p', {}, j.job_type === 'agent' ? 'Prompt: ' : 'Command: ', el('code', {}, String(j.job_type === 'agent' ? j.prompt || '' : j.command || ''))),
        el('details', {}, el('summary', {}, 'All fields'), ZC.tree(j)), hist, ' ', run, ' ', pause, ' ', del));
    }
    document.documentElement.dataset.loaded = 'cron';
  }

  $('cron-add').addEventListener('submit', (ev) => { ev.preventDefault(); add().catch(e => ZC.showError(e)); });
  async function add() {
    const body = { name: $('cron-name').value, agent: $('cron-agent').value, schedule: $('cron-schedule').value };
    const what = $('cron-what').value;
    if ($('cron-kind').value === 'agent') { body.prompt = what; body.job_type = 'agent'; } else body.command = what;
    const err = $('cron-error');
    try {
      const j = await api('POST', '/api/cron', body);
      err.hidden = true;
      $('cron-result').textContent = 'Added ' + (j.name || j.id) + '.';
      $('cron-add').reset();
      await load();
    } catch (e) { err.textContent = e.message; err.hidden = false; }
  }
  await load();
});
