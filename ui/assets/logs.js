// Run history: filters (executor, job, outcome, time range), a paged table from
// /joblog/pageList, live output, stopping a run and cleaning up by rule.
'use strict';

(() => {
  const { listPage, t, el, clear, api, toast, openDialog, confirmDialog, infoDialog, fmtDate,
    rowMenu, badge, boot, readQuery, range, serverTime, msgBlock } = App;
  const jobIn = document.getElementById('f-job');
  const jobList = document.getElementById('job-options');
  const rangeSel = document.getElementById('f-range');
  const fromIn = document.getElementById('f-from');
  const toIn = document.getElementById('f-to');
  const groups = new Map((boot.groups || []).map((g) => [g.id, g]));

  const list = listPage({
    endpoint: '/joblog/pageList', table: 'logs-table', row, reloadOn: ['logStatus'],
    fields: { jobGroup: '0', logStatus: '-1' },
    params: () => { applyRange(); return { jobId: state.jobId, filterTime: filterTime() }; },
    query: () => ({
      jobId: state.jobId || '', range: rangeSel.value === 'today' ? '' : rangeSel.value,
      from: rangeSel.value === 'custom' ? dt(fromIn.value) : '', to: rangeSel.value === 'custom' ? dt(toIn.value) : '',
    }),
    prepare: nameJobs,
    // Runs still going: look again soon while the page is visible.
    again: (rows) => rows.some((r) => r.triggerCode === 200 && r.handleCode === 0),
    submit: checkFilters,
    reset: () => { jobIn.value = ''; state.jobId = 0; rangeSel.value = 'today'; },
  });
  const { filters, state, load, reload } = list;
  state.jobId = boot.jobId || 0;
  filters.jobGroup.value = String(boot.group || 0); // the page's job decides its group
  const q = readQuery();
  if (q.has('range') && rangeSel.querySelector('option[value="' + CSS.escape(q.get('range')) + '"]')) rangeSel.value = q.get('range');
  if (rangeSel.value === 'custom') {
    fromIn.value = q.get('from') || '';
    toIn.value = q.get('to') || '';
  }

  // applyRange fills the time fields from the chosen preset (recomputed on every load,
  // so "last hour" moves with the clock).
  function applyRange() {
    const name = rangeSel.value;
    if (name === 'custom') return;
    if (name === 'any') { fromIn.value = ''; toIn.value = ''; return; }
    if (name === 'hour') {
      fromIn.value = serverTime(3600000);
      toIn.value = serverTime(0);
      return;
    }
    const r = range(name);
    if (r) {
      fromIn.value = r[0] + ' 00:00:00';
      toIn.value = r[1] + ' 23:59:59';
    }
  }

  // dt normalises a typed time: a date alone, or a time without seconds, is completed.
  const dt = (v) => {
    const s = String(v || '').trim().replace('T', ' ');
    if (/^\d{4}-\d{2}-\d{2}$/.test(s)) return s + ' 00:00:00';
    if (/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/.test(s)) return s + ':00';
    return s;
  };
  const validTime = (s) => s === '' || /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(s);

  function filterTime() {
    const a = dt(fromIn.value);
    const b = dt(toIn.value);
    return a && b ? a + ' - ' + b : '';
  }

  function parseJob() {
    const m = /^\s*#?(\d+)/.exec(jobIn.value);
    return m ? +m[1] : 0;
  }

  // Job descriptions of a page's rows, in one request for the whole page (the list's
  // rows carry only the job id). Names seen once are kept for the page's life.
  const jobNames = new Map();
  async function nameJobs(rows) {
    const ids = [...new Set(rows.map((r) => r.jobId))].filter((id) => id > 0 && !jobNames.has(id));
    if (!ids.length) return;
    try {
      const names = await api('/joblog/jobNames', { ids: ids.join(',') });
      for (const id of ids) jobNames.set(id, names && Object.prototype.hasOwnProperty.call(names, id) ? String(names[id]) : null);
    } catch (e) {
      // The ids alone still identify the jobs.
    }
  }

  function outcome(l) {
    if (l.handleCode === 200) return badge(t('status_success'), 'success');
    if (l.handleCode === 502) return badge(t('status_timeout'), 'warning');
    if (l.handleCode > 0) return badge(t('status_failed'), 'danger');
    if (l.triggerCode === 200) return badge(t('status_running'), 'running');
    if (l.triggerCode > 0) return badge(t('logs_dispatch_fail'), 'danger');
    if (l.scheduled) return badge(t('status_scheduled'), 'muted');
    return badge(t('status_pending'), 'muted');
  }

  function msgLink(title, html, kind) {
    if (!html) return null;
    return el('button', { type: 'button', class: 'link-btn', onclick: () => infoDialog(title, msgBlock(html, kind)) }, t('common_show'));
  }

  function machineCell(address) {
    const s = address.replace(/^https?:\/\//, '').replace(/\/$/, '');
    const m = /^(.*?)(:\d+)$/.exec(s);
    return el('span', { class: 'machine' }, m ? [m[1], el('wbr'), m[2]] : s);
  }

  function row(l) {
    const running = l.triggerCode === 200 && l.handleCode === 0;
    const hasOutput = l.triggerCode === 200 || l.handleCode > 0;
    const items = [
      hasOutput && { label: t('logs_rolling'), action: 'rolling', run: () => window.open(boot.base + '/joblog/logDetailPage?id=' + l.id, '_blank', 'noopener') },
      running && { label: t('logs_kill'), action: 'kill', danger: true, run: () => kill(l) },
      { label: t('logs_trigger_msg'), action: 'trigger-msg', run: () => infoDialog(t('logs_trigger_msg'), msgBlock(l.triggerMsg, 'trigger')) },
      l.handleMsg && { label: t('logs_handle_msg'), action: 'handle-msg', run: () => infoDialog(t('logs_handle_msg'), msgBlock(l.handleMsg, 'result')) },
    ];
    const g = groups.get(l.jobGroup);
    const name = jobNames.get(l.jobId);
    // The job's cell is two lines, each cut with an ellipsis and given whole in its
    // tooltip: the job, then its handler, executor, parameter and shard.
    const details = [g ? g.title : '', l.executorParam ? t('logs_param') + ': ' + l.executorParam : '',
      l.executorShardingParam ? t('logs_shard') + ' ' + l.executorShardingParam : ''].filter(Boolean).join(' · ');
    const machine = l.executorAddress ? String(l.executorAddress) : '';
    return el('tr', { dataset: { id: l.id } },
      el('td', { class: 'col-id mono' }, String(l.id)),
      el('td', { class: 'cell-main' },
        el('div', { class: 'job-line' },
          el('a', { href: boot.base + '/joblog?jobId=' + l.jobId, class: 'strong job-name', title: name ? name + ' #' + l.jobId : '#' + l.jobId }, name || '#' + l.jobId),
          name ? el('span', { class: 'muted sub-inline job-id' }, ' #' + l.jobId) : null),
        el('div', { class: 'sub job-sub', title: [l.executorHandler, details].filter(Boolean).join(' · ') },
          l.executorHandler ? el('span', { class: 'mono' }, l.executorHandler) : null,
          l.executorHandler && details ? ' · ' : '', details)),
      el('td', { class: 'nowrap col-time' }, el('div', {}, fmtDate(l.triggerTime)),
        el('div', { class: 'sub' }, l.triggerCode === 200 ? t('logs_dispatch_ok') : l.triggerCode > 0 ? t('logs_dispatch_fail') : '', ' ', msgLink(t('logs_trigger_msg'), l.triggerMsg, 'trigger'))),
      // The address without its scheme and trailing slash, breaking before its port;
      // whole in the tooltip.
      el('td', { class: 'col-machine mono small', title: machine }, machine ? machineCell(machine) : el('span', { class: 'muted' }, '—')),
      el('td', { class: 'nowrap col-time' }, fmtDate(l.handleTime) || el('span', { class: 'muted' }, '—')),
      el('td', { class: 'cell-outcome' }, outcome(l), l.handleMsg ? el('div', { class: 'sub' }, msgLink(t('logs_handle_msg'), l.handleMsg, 'result')) : null),
      el('td', { class: 'col-actions' },
        hasOutput ? el('a', { class: 'btn btn-sm btn-ghost', href: boot.base + '/joblog/logDetailPage?id=' + l.id, target: '_blank', rel: 'noopener', title: t('logs_rolling'), dataset: { action: 'rolling-quick' } },
          el('svg:svg', { viewBox: '0 0 20 20', 'aria-hidden': 'true' }, el('svg:path', { d: 'M3 4h14v12H3zM6 8l3 2-3 2M10.5 13H14' })),
          el('span', { class: 'btn-label' }, t('logs_rolling'))) : null,
        rowMenu(items)));
  }

  async function kill(l) {
    if (!(await confirmDialog(t('logs_kill_ask', l.id), { ok: t('logs_kill'), danger: true }))) return;
    try {
      await api('/joblog/logKill', { id: l.id });
      toast(t('logs_killed'));
      load();
    } catch (e) {
      toast(e.message, 'error');
    }
  }

  // Job picker: a datalist filled from the job list of the chosen executor.
  let jobTimer = 0;
  let jobSeq = 0;
  async function fillJobs() {
    const my = ++jobSeq;
    const text = jobIn.value.trim();
    const desc = /^#?\d+(\s|$)/.test(text) ? '' : text;
    try {
      const page = await api('/jobinfo/pageList', { jobGroup: filters.jobGroup.value, triggerStatus: -1, jobDesc: desc, executorHandler: '', author: '', offset: 0, pagesize: 20 });
      if (my !== jobSeq) return [];
      clear(jobList);
      (page.data || []).forEach((j) => jobList.appendChild(el('option', { value: j.id + ' · ' + j.jobDesc })));
      return page.data || [];
    } catch (e) {
      return [];
    }
  }
  jobIn.addEventListener('focus', () => { if (!jobList.firstChild) fillJobs(); });
  jobIn.addEventListener('input', () => {
    clearTimeout(jobTimer);
    jobTimer = setTimeout(fillJobs, 250);
    const id = parseJob();
    if (id && /·/.test(jobIn.value)) { state.jobId = id; reload(); }
    if (!jobIn.value.trim() && state.jobId) { state.jobId = 0; reload(); }
  });

  async function resolveJob() {
    const text = jobIn.value.trim();
    if (!text) { state.jobId = 0; return true; }
    const id = parseJob();
    if (id) { state.jobId = id; return true; }
    const found = await fillJobs();
    if (found.length === 1) {
      state.jobId = found[0].id;
      jobIn.value = found[0].id + ' · ' + found[0].jobDesc;
      return true;
    }
    toast(t('logs_job_ph'), 'error');
    jobIn.focus();
    return false;
  }

  // checkFilters completes the typed times and finds the typed job before a search.
  async function checkFilters() {
    for (const f of [fromIn, toIn]) {
      f.value = dt(f.value);
      if (!validTime(f.value)) {
        toast((f === fromIn ? t('logs_filter_from') : t('logs_filter_to')) + ': yyyy-MM-dd HH:mm:ss', 'error');
        f.focus();
        return false;
      }
    }
    return resolveJob();
  }

  filters.jobGroup.addEventListener('change', () => {
    jobIn.value = '';
    state.jobId = 0;
    clear(jobList);
    reload();
  });
  rangeSel.addEventListener('change', reload);
  for (const f of [fromIn, toIn]) f.addEventListener('input', () => { rangeSel.value = 'custom'; });

  // Clean-up.
  const dlgClear = document.getElementById('dlg-clear');
  const clearForm = document.getElementById('form-clear');
  document.getElementById('btn-clear').addEventListener('click', () => {
    clearForm.reset();
    const g = +filters.jobGroup.value;
    const scope = document.getElementById('clear-scope');
    clear(scope);
    scope.appendChild(el('span', {}, t('logs_filter_group') + ': ', el('strong', {}, g ? (groups.get(g) || {}).title || '#' + g : t('logs_all_groups'))));
    scope.appendChild(el('br'));
    scope.appendChild(el('span', {}, t('logs_filter_job') + ': ', el('strong', {}, state.jobId ? jobIn.value || '#' + state.jobId : t('common_all'))));
    openDialog(dlgClear);
  });
  clearForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    const type = clearForm.elements.namedItem('type').value;
    const rule = clearForm.elements.namedItem('type').selectedOptions[0].textContent;
    dlgClear.close();
    if (!(await confirmDialog(rule + ' — ' + t('logs_clear_ask'), { ok: t('logs_clear'), danger: true }))) return;
    try {
      await api('/joblog/clearLog', { jobGroup: filters.jobGroup.value, jobId: state.jobId, type });
      toast(t('logs_clear_done'));
      reload();
    } catch (err) {
      toast(err.message, 'error');
    }
  });

  load();
})();
