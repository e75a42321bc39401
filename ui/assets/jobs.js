// Jobs page: filters, a paged table from /jobinfo/pageList, and the job actions
// (add, edit, copy, run once, pause/resume, delete, next runs, machines online).
'use strict';

(() => {
  const { saveForm, listPage, t, el, clear, $, api, toast, openDialog, formError, confirmDialog, confirmDelete, infoDialog, busy, fmtMs,
    rowMenu, badge, boot } = App;
  const filters = document.getElementById('filters');
  if (!filters) return; // no executor group yet
  const labels = boot.labels || {};
  const groups = new Map((boot.groups || []).map((g) => [g.id, g]));
  const list = listPage({
    endpoint: '/jobinfo/pageList', table: 'jobs-table', row, reloadOn: ['jobGroup', 'triggerStatus'],
    fields: { jobGroup: '0', triggerStatus: '-1', jobDesc: '', executorHandler: '', author: '', tag: '' },
  });
  const { state, load } = list;
  if (!groups.has(+filters.jobGroup.value)) filters.jobGroup.value = '0';

  const groupName = (id) => (groups.has(id) ? groups.get(id).title : '#' + id);
  const label = (kind, v) => (labels[kind] && labels[kind][v]) || v;

  function scheduleCell(j) {
    if (j.scheduleType === 'CRON') {
      const cell = [el('span', { class: 'tag' }, 'CRON'), ' ', el('code', {}, j.scheduleConf)];
      if (j.timeZone) cell.push(el('div', { class: 'sub mono', dataset: { zone: j.timeZone } }, j.timeZone));
      return cell;
    }
    if (j.scheduleType === 'FIX_RATE') return [el('span', { class: 'tag' }, label('stype', 'FIX_RATE')), ' ', el('code', {}, j.scheduleConf + 's')];
    return el('span', { class: 'muted' }, label('stype', j.scheduleType).split(/[（(]/)[0].trim());
  }

  // tagsCell shows a job's tags as chips; a click filters the list by that tag.
  function tagsCell(j) {
    if (!j.tags || !j.tags.length) return null;
    return el('div', { class: 'job-tags' }, j.tags.map((tag) => el('button', {
      type: 'button', class: 'tag tag-job', dataset: { tag }, title: t('jobs_filter_tag') + ': ' + tag,
      onclick: (e) => { e.stopPropagation(); filters.tag.value = tag; filters.requestSubmit(); },
    }, tag)));
  }

  // nextCell shows a fire time as date over time, so the column stays narrow.
  function nextCell(s) {
    const i = s.indexOf(' ');
    return i < 0 ? s : [el('div', { class: 'nowrap' }, s.slice(0, i)), el('div', { class: 'sub nowrap' }, s.slice(i + 1))];
  }

  function row(j) {
    const running = j.triggerStatus === 1;
    const glue = j.glueType !== 'BEAN';
    const schedulable = j.scheduleType === 'CRON' || j.scheduleType === 'FIX_RATE';
    const menu = rowMenu([
      { label: t('jobs_run_once'), action: 'run', run: () => openRun(j) },
      { label: t('jobs_logs'), action: 'logs', run: () => window.location.assign(boot.base + '/joblog?jobId=' + j.id) },
      { label: t('jobs_registry'), action: 'registry', run: () => showRegistry(j) },
      schedulable && { label: t('jobs_next_times'), action: 'next', run: () => showNext(j) },
      glue && '-',
      glue && { label: boot.admin ? t('jobs_glue_ide') : t('jobs_glue_view'), action: 'glue', run: () => window.open(boot.base + '/jobcode?jobId=' + j.id, '_blank', 'noopener') },
      '-',
      running ? { label: t('jobs_stop'), action: 'stop', run: () => toggle(j, false) } : { label: t('jobs_start'), action: 'start', run: () => toggle(j, true) },
      { label: t('common_edit'), action: 'edit', run: () => openJob('edit', j) },
      { label: t('common_copy'), action: 'copy', run: () => openJob('copy', j) },
      { label: t('common_delete'), action: 'delete', danger: true, run: () => remove(j) },
    ]);
    return el('tr', { dataset: { id: j.id } },
      el('td', { class: 'col-id mono' }, String(j.id)),
      el('td', { class: 'cell-main' }, el('div', { class: 'strong' }, j.jobDesc), el('div', { class: 'sub' }, groupName(j.jobGroup)), tagsCell(j)),
      el('td', { class: 'cell-sched' }, scheduleCell(j)),
      el('td', { class: 'cell-mode' }, el('div', { class: 'nowrap' }, label('glue', j.glueType)), j.glueType === 'BEAN' ? el('div', { class: 'sub mono' }, j.executorHandler) : null),
      el('td', {}, j.author),
      el('td', {}, running ? badge(t('jobs_state_running'), 'success') : badge(t('jobs_state_stopped'), 'muted')),
      el('td', { class: 'cell-next' }, running && j.triggerNextTime > 0 ? nextCell(fmtMs(j.triggerNextTime)) : el('span', { class: 'muted' }, '—')),
      el('td', { class: 'col-actions' },
        el('button', { type: 'button', class: 'btn btn-sm btn-ghost', dataset: { action: 'run-quick' }, title: t('jobs_run_once'),
          'aria-label': t('jobs_run_once') + ': ' + (j.jobDesc || '#' + j.id), onclick: () => openRun(j) },
          el('svg:svg', { viewBox: '0 0 20 20', 'aria-hidden': 'true' }, el('svg:path', { d: 'M6 4.5v11l9-5.5z' })), el('span', { class: 'btn-label' }, t('jobs_run_once'))),
        menu));
  }

  async function toggle(j, start) {
    if (!(await confirmDialog(t(start ? 'jobs_start_ask' : 'jobs_stop_ask', j.id), { ok: t(start ? 'jobs_start' : 'jobs_stop') }))) return;
    try {
      await api(start ? '/jobinfo/start' : '/jobinfo/stop', { 'ids[]': j.id });
      toast(t(start ? 'jobs_started' : 'jobs_stopped'));
      load();
    } catch (e) {
      toast(e.message, 'error');
    }
  }

  function remove(j) {
    return confirmDelete(t('jobs_delete_ask', j.id, j.jobDesc), '/jobinfo/delete', j.id, load);
  }

  function addressList(list) {
    if (!list || list.length === 0) return el('p', { class: 'muted' }, t('groups_none_online'));
    return el('ul', { class: 'plain-list mono' }, list.map((a) => el('li', {}, a)));
  }

  async function showRegistry(j) {
    try {
      const g = await api('/jobgroup/loadById', { id: j.jobGroup });
      infoDialog(t('jobs_registry_title', g.title || groupName(j.jobGroup)), addressList(g.registryList));
    } catch (e) {
      toast(e.message, 'error');
    }
  }

  async function showNext(j) {
    try {
      const times = await api('/jobinfo/nextTriggerTime', zoned({ scheduleType: j.scheduleType, scheduleConf: j.scheduleConf }, j.timeZone, j.calendarIds));
      infoDialog(t('jobs_next_title', j.id), times && times.length
        ? el('ol', { class: 'fire-list' }, times.map((x) => el('li', {}, x)))
        : el('p', { class: 'muted' }, t('jobs_f_next_none')));
    } catch (e) {
      infoDialog(t('jobs_next_title', j.id), el('p', { class: 'form-error' }, e.message));
    }
  }

  // The job form.
  const dlgJob = document.getElementById('dlg-job');
  const form = document.getElementById('form-job');
  const stype = document.getElementById('job-stype');
  const cronIn = document.getElementById('job-cron');
  const rateIn = document.getElementById('job-rate');
  const glueSel = document.getElementById('job-glue');
  const handlerIn = document.getElementById('job-handler');
  const fireList = document.getElementById('fire-times');
  const zoneIn = document.getElementById('job-zone');
  const calSel = document.getElementById('job-calendars'); // the calendars' checkboxes; absent when there are none
  const calBoxes = () => (calSel ? Array.from(calSel.querySelectorAll('input[name="calendarIds"]')) : []);

  // zoned adds a CRON's own zone to a preview request (the answer then shows each
  // time with its offset) and the job's calendars (their days are left out).
  function zoned(params, zone, calendars) {
    if (params.scheduleType === 'CRON' && zone) params.timeZone = zone;
    if (calendars && calendars.length) params.calendarIds = calendars.join(',');
    return params;
  }

  const chosenCalendars = () => calBoxes().filter((b) => b.checked).map((b) => b.value);
  let editing = null; // { mode, job }

  function syncSchedule() {
    const v = stype.value;
    form.querySelectorAll('[data-when-stype]').forEach((n) => { n.hidden = !n.dataset.whenStype.split(' ').includes(v); });
    previewSoon();
  }

  function syncGlue() {
    const bean = glueSel.value === 'BEAN';
    handlerIn.disabled = !bean;
    if (!bean) handlerIn.value = '';
    form.querySelectorAll('[data-when-glue]').forEach((n) => { n.hidden = !bean; });
  }

  let previewTimer = 0;
  let previewSeq = 0;
  function previewSoon() {
    clearTimeout(previewTimer);
    // The refusal of the previous input goes at once, not when the next answer comes.
    if (fireList.classList.contains('invalid')) { clear(fireList); fireList.classList.remove('invalid'); }
    previewTimer = setTimeout(preview, 300);
  }

  async function preview() {
    const type = stype.value;
    const conf = type === 'CRON' ? cronIn.value.trim() : type === 'FIX_RATE' ? rateIn.value.trim() : '';
    const my = ++previewSeq;
    clear(fireList);
    if (!conf || type === 'NONE') return;
    try {
      const times = await api('/jobinfo/nextTriggerTime', zoned({ scheduleType: type, scheduleConf: conf }, zoneIn.value.trim(), chosenCalendars()));
      if (my !== previewSeq) return;
      if (!times || times.length === 0) fireList.appendChild(el('li', { class: 'muted' }, t('jobs_f_next_none')));
      else times.forEach((x) => fireList.appendChild(el('li', {}, x)));
      fireList.classList.remove('invalid');
    } catch (e) {
      if (my !== previewSeq) return;
      fireList.appendChild(el('li', { class: 'form-error' }, e.message));
      fireList.classList.add('invalid');
    }
  }

  function setVal(name, v) {
    const f = form.elements.namedItem(name);
    if (f) f.value = v === null || v === undefined ? '' : String(v);
  }

  function firstSelectableGroup() {
    const g = filters.jobGroup.value;
    if (g !== '0' && groups.has(+g)) return g;
    return boot.groups && boot.groups.length ? String(boot.groups[0].id) : '';
  }

  function openJob(mode, j) {
    editing = { mode, job: j || null };
    form.reset();
    clear(fireList);
    $('[data-slot="title"]', dlgJob).textContent = mode === 'add' ? t('jobs_new') : mode === 'edit' ? t('jobs_edit', j.id) : t('jobs_copy', j.id);
    if (j) {
      setVal('id', mode === 'edit' ? j.id : '');
      for (const k of ['jobGroup', 'jobDesc', 'author', 'alarmEmail', 'scheduleType', 'misfireStrategy', 'executorRouteStrategy',
        'executorBlockStrategy', 'executorHandler', 'executorParam', 'executorTimeout', 'executorFailRetryCount', 'childJobId', 'glueType',
        'retryBackoff', 'retryWaitMs', 'retryCapMs', 'retryJitter']) {
        setVal(k, j[k]);
      }
      cronIn.value = j.scheduleType === 'CRON' ? j.scheduleConf || '' : '';
      zoneIn.value = j.timeZone || '';
      form.tags.value = (j.tags || []).join(', ');
      calBoxes().forEach((b) => { b.checked = (j.calendarIds || []).includes(+b.value); });
      rateIn.value = j.scheduleType === 'FIX_RATE' ? j.scheduleConf || '' : '';
      if (mode === 'copy') setVal('jobDesc', (j.jobDesc || '') + t('common_copy_suffix'));
    } else {
      setVal('id', '');
      setVal('jobGroup', firstSelectableGroup());
      setVal('author', boot.user || '');
    }
    glueSel.disabled = mode === 'edit';
    document.getElementById('glue-hint').textContent = mode === 'edit' ? t('jobs_f_glue_locked') : boot.admin ? '' : t('jobs_f_glue_admin');
    document.getElementById('start-now-wrap').hidden = mode === 'edit';
    builder.load(cronIn.value);
    syncSchedule();
    syncGlue();
    syncRetry();
    if (j && j.glueType === 'BEAN') handlerIn.value = j.executorHandler || '';
    openDialog(dlgJob);
    form.jobDesc.focus();
  }

  const builder = App.cronBuilder(document.getElementById('cron-rows'), cronIn, previewSoon);
  document.getElementById('cron-presets').addEventListener('change', (e) => {
    if (e.target.value) cronIn.value = e.target.value;
    e.target.value = '';
    builder.load(cronIn.value);
    previewSoon();
  });
  stype.addEventListener('change', syncSchedule);
  cronIn.addEventListener('input', previewSoon);
  zoneIn.addEventListener('change', previewSoon);
  if (calSel) calSel.addEventListener('change', previewSoon);
  rateIn.addEventListener('input', previewSoon);
  glueSel.addEventListener('change', syncGlue);

  // Retry back-off: the wait fields only for a kind that waits, the cap only for
  // EXPONENTIAL.
  const retrySel = document.getElementById('job-retry-backoff');
  function syncRetry() {
    const kind = retrySel.value;
    document.querySelectorAll('#retry-backoff [data-retry]').forEach((f) => {
      f.hidden = !kind || (f.dataset.retry === 'cap' && kind !== 'EXPONENTIAL');
    });
  }
  retrySel.addEventListener('change', syncRetry);

  const isCount = (v) => /^\d+$/.test(v);

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const mode = editing.mode;
    const v = (n) => String(form.elements.namedItem(n).value || '').trim();
    const type = stype.value;
    const conf = type === 'CRON' ? cronIn.value.trim() : type === 'FIX_RATE' ? rateIn.value.trim() : '';
    const need = (ok, msg, field) => {
      if (ok) return true;
      formError(form, msg);
      if (field) field.focus();
      return false;
    };
    if (!need(v('jobGroup'), t('jobs_f_group') + ': ' + t('common_required'), form.jobGroup)) return;
    if (!need(v('jobDesc'), t('jobs_f_desc') + ': ' + t('common_required'), form.jobDesc)) return;
    if (!need(v('author'), t('jobs_f_author') + ': ' + t('common_required'), form.author)) return;
    if (type === 'CRON' && !need(conf, t('jobs_f_cron') + ': ' + t('common_required'), cronIn)) return;
    if (type === 'FIX_RATE' && !need(isCount(conf) && +conf >= 1, t('jobs_f_rate') + ': ' + t('common_required'), rateIn)) return;
    if (glueSel.value === 'BEAN' && !need(v('executorHandler'), t('jobs_f_handler') + ': ' + t('common_required'), handlerIn)) return;
    for (const n of ['executorTimeout', 'executorFailRetryCount']) {
      const x = v(n) || '0';
      if (!need(isCount(x), t(n === 'executorTimeout' ? 'jobs_f_timeout' : 'jobs_f_retry'), form.elements.namedItem(n))) return;
    }
    const retry = v('retryBackoff');
    if (retry) {
      for (const [n, label] of [['retryWaitMs', 'jobs_f_retry_wait'], ['retryCapMs', 'jobs_f_retry_cap'], ['retryJitter', 'jobs_f_retry_jitter']]) {
        if (!need(v(n) === '' || isCount(v(n)), t(label), form.elements.namedItem(n))) return;
      }
    }
    const child = v('childJobId').replace(/\s+/g, '');
    if (!need(child === '' || /^\d+(,\d+)*$/.test(child), t('jobs_f_child') + ': ' + t('jobs_f_child_ph'), form.childJobId)) return;

    const params = {
      jobGroup: v('jobGroup'), jobDesc: v('jobDesc'), author: v('author'), alarmEmail: v('alarmEmail'),
      scheduleType: type, scheduleConf: conf, misfireStrategy: v('misfireStrategy'),
      executorRouteStrategy: v('executorRouteStrategy'), executorBlockStrategy: v('executorBlockStrategy'),
      executorHandler: glueSel.value === 'BEAN' ? v('executorHandler') : '', executorParam: form.executorParam.value,
      executorTimeout: v('executorTimeout') || '0', executorFailRetryCount: v('executorFailRetryCount') || '0',
      childJobId: child, glueType: glueSel.value, timeZone: type === 'CRON' ? zoneIn.value.trim() : '',
      tags: v('tags'),
    };
    if (calSel) params.calendarIds = chosenCalendars().join(',');
    params.retryBackoff = retry;
    if (retry) {
      params.retryWaitMs = v('retryWaitMs') || '0';
      params.retryCapMs = retry === 'EXPONENTIAL' ? v('retryCapMs') || '0' : '0';
      params.retryJitter = v('retryJitter') || '0';
    }
    let path = '/jobinfo/insert';
    if (mode === 'edit') {
      path = '/jobinfo/update';
      params.id = editing.job.id;
      params.glueType = editing.job.glueType;
    } else {
      if (glueSel.value !== 'BEAN') {
        const src = mode === 'copy' && editing.job.glueType === glueSel.value ? editing.job.glueSource : (boot.starters || {})[glueSel.value];
        params.glueSource = src || '';
        params.glueRemark = mode === 'copy' && editing.job.glueType === glueSel.value && editing.job.glueRemark ? editing.job.glueRemark : t('jobs_glue_initial');
      }
      if (document.getElementById('job-start-now').checked) params.triggerStatus = 1;
    }
    await saveForm(document.getElementById('job-save'), form, dlgJob, path, params, () => {
      if (mode !== 'edit') state.offset = 0;
      load();
    });
  });

  // Run once.
  const dlgRun = document.getElementById('dlg-run');
  const runForm = document.getElementById('form-run');
  const runOnline = document.getElementById('run-online');

  async function openRun(j) {
    runForm.reset();
    runForm.elements.namedItem('id').value = j.id;
    runForm.executorParam.value = j.executorParam || '';
    $('[data-slot="title"]', dlgRun).textContent = t('jobs_run_title', j.id);
    clear(runOnline);
    openDialog(dlgRun);
    runForm.executorParam.focus();
    try {
      const g = await api('/jobgroup/loadById', { id: j.jobGroup });
      const list = g.registryList || [];
      clear(runOnline);
      if (list.length === 0) {
        runOnline.appendChild(el('span', { class: 'muted small' }, t('jobs_run_offline')));
        return;
      }
      runOnline.appendChild(el('span', { class: 'muted small' }, t('jobs_run_online')));
      list.forEach((a) => runOnline.appendChild(el('button', {
        type: 'button', class: 'chip mono',
        onclick: () => {
          const cur = runForm.addressList.value.split(',').map((s) => s.trim()).filter(Boolean);
          if (!cur.includes(a)) cur.push(a);
          runForm.addressList.value = cur.join(',');
        },
      }, a)));
    } catch (e) {
      clear(runOnline);
    }
  }

  runForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    await busy(document.getElementById('run-submit'), async () => {
      try {
        await api('/jobinfo/trigger', { 'ids[]': runForm.elements.namedItem('id').value, executorParam: runForm.executorParam.value, addressList: runForm.addressList.value.trim() });
        dlgRun.close();
        toast(t('jobs_run_sent'));
      } catch (err) {
        formError(runForm, err.message);
      }
    });
  });

  document.getElementById('btn-new').addEventListener('click', () => openJob('add', null));

  load();
})();
