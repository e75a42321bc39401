// Workflows: the list, the designer (nodes from jobs, connections with conditions,
// parameter templates, the graph drawn as SVG laid out by depth), run once with an
// input, and the runs of a workflow with a run view colouring each node by its state.
'use strict';

(() => {
  const { listPage, rowMenu, t, el, clear, append, $, api, toast, openDialog, formError, confirmDialog, busy, badge, boot } = App;
  const groups = new Map((boot.groups || []).map((g) => [g.id, g]));
  const list = listPage({ endpoint: '/workflow/pageList', table: 'workflows-table', fields: { name: '' }, row });

  // Jobs the user may manage: the designer's node choices and the run view's names,
  // read again each time one of them opens (jobs come and go).
  let jobs = null;
  async function loadJobs() {
    const page = await api('/jobinfo/pageList', { jobGroup: -1, triggerStatus: -1, offset: 0, pagesize: 10000 });
    jobs = new Map((page.data || []).map((j) => [j.id, j]));
    return jobs;
  }
  const jobLabel = (id) => {
    const j = jobs && jobs.get(id);
    return j ? j.jobDesc : '#' + id;
  };

  const STATE_KIND = { waiting: 'muted', running: 'running', succeeded: 'success', failed: 'danger', skipped: 'warning', cancelled: 'muted' };
  const STATE_TEXT = {
    waiting: t('wf_state_waiting'), running: t('wf_state_running'), succeeded: t('wf_state_succeeded'),
    failed: t('wf_state_failed'), skipped: t('wf_state_skipped'), cancelled: t('wf_state_cancelled'),
  };
  const stateText = (s) => STATE_TEXT[s] || s;
  const TRIGGER_TEXT = { MANUAL: t('wf_trigger_manual'), API: t('wf_trigger_api'), CRON: t('wf_trigger_cron'), MISFIRE: t('wf_trigger_misfire') };
  const stateBadge = (s) => badge(stateText(s), STATE_KIND[s] || 'muted');
  const NAME_RE = /^[A-Za-z][A-Za-z0-9_-]*$/;

  function row(w) {
    const nodes = (w.graph && w.graph.nodes) || [];
    const sched = w.scheduleType === 'NONE' ? t('wf_stype_none') : w.scheduleType + ' · ' + w.scheduleConf;
    return el('tr', { dataset: { id: w.id, name: w.name } },
      el('td', { class: 'col-id mono' }, String(w.id)),
      el('td', { class: 'strong' }, w.name),
      el('td', {}, String(nodes.length)),
      el('td', {}, el('span', { class: w.scheduleType === 'NONE' ? '' : 'mono' }, sched), ' ',
        w.scheduleType === 'NONE' ? null : badge(w.scheduled ? t('wf_sched_on') : t('wf_sched_off'), w.scheduled ? 'success' : 'muted')),
      el('td', {}, w.failurePolicy === 'CONTINUE' ? t('wf_policy_continue') : t('wf_policy_stop')),
      el('td', { class: 'mono' }, (w.scheduled && w.triggerNextTime) || '—'),
      el('td', {}, el('span', { class: 'mono' }, w.updateTime || ''), ' ', el('small', { class: 'muted' }, w.author)),
      el('td', { class: 'col-actions' }, rowMenu([
        { label: t('wf_run_once'), action: 'trigger', run: () => openTrigger(w) },
        { label: t('wf_runs'), action: 'runs', run: () => openRuns(w) },
        { label: t('wf_edit'), action: 'edit', run: () => openDesigner(w.id) },
        '-',
        { label: t('common_delete'), action: 'delete', danger: true, run: () => remove(w) },
      ])));
  }

  async function remove(w) {
    if (!(await confirmDialog(t('wf_delete_ask', w.name), { ok: t('common_delete'), danger: true }))) return;
    try {
      await api('/workflow/remove', { id: w.id });
      toast(t('common_deleted'));
      list.load();
    } catch (e) {
      toast(e.message, 'error');
    }
  }

  // ---- The drawing: layers by depth (the longest path from a root), left to right.

  const BOX_W = 168;
  const BOX_H = 46;
  const GAP_X = 70;
  const GAP_Y = 22;
  const PAD = 16;

  function layout(g) {
    const at = new Map(g.nodes.map((n, i) => [n.name, i]));
    const edges = g.edges.filter((e) => at.has(e.from) && at.has(e.to));
    let depth = depths(g.nodes, edges);
    // A cycle (refused on save, but drawn while it is being edited) is drawn without
    // its edges that point back in the order the nodes were added.
    if (!depth) depth = depths(g.nodes, edges.filter((e) => at.get(e.from) < at.get(e.to)));
    const layers = [];
    for (const n of g.nodes) (layers[depth.get(n.name)] = layers[depth.get(n.name)] || []).push(n.name);
    const pos = new Map();
    const tallest = Math.max(1, ...layers.map((l) => l.length));
    const height = tallest * (BOX_H + GAP_Y) - GAP_Y;
    layers.forEach((l, x) => {
      if (!l) return;
      const top = (height - (l.length * (BOX_H + GAP_Y) - GAP_Y)) / 2;
      l.forEach((name, y) => pos.set(name, { x: PAD + x * (BOX_W + GAP_X), y: PAD + top + y * (BOX_H + GAP_Y) }));
    });
    const back = g.edges.some((e) => at.has(e.from) && at.has(e.to) && depth.get(e.to) <= depth.get(e.from));
    return { pos, width: 2 * PAD + layers.length * (BOX_W + GAP_X) - GAP_X, height: 2 * PAD + height + (back ? 40 : 0) };
  }

  // depths is each node's longest path from a root, or null when the edges make a
  // cycle: n rounds of relaxing every edge settle any acyclic graph.
  function depths(nodes, edges) {
    const depth = new Map(nodes.map((n) => [n.name, 0]));
    for (let i = 0; i <= nodes.length; i++) {
      let moved = false;
      for (const e of edges) {
        if (depth.get(e.from) + 1 > depth.get(e.to)) { depth.set(e.to, depth.get(e.from) + 1); moved = true; }
      }
      if (!moved) return depth;
    }
    return null;
  }

  function whenLabel(e) {
    switch (e.when) {
      case 'failure': return t('wf_when_failure');
      case 'always': return t('wf_when_always');
      case 'output': return (e.field ? e.field + ' = ' : '= ') + (e.equals || '');
      default: return '';
    }
  }

  // draw renders graph g into box. opts: states (name → node run), selected, bad (a
  // node named by a refusal), onNode(name).
  function draw(box, g, opts) {
    const o = opts || {};
    clear(box);
    if (!g.nodes.length) { box.appendChild(el('p', { class: 'muted wf-empty' }, t('wf_no_nodes'))); return; }
    const { pos, width, height } = layout(g);
    const svg = el('svg:svg', { class: 'wf-svg', viewBox: '0 0 ' + Math.max(width, 200) + ' ' + height, width: Math.max(width, 200), height, role: o.onNode ? 'group' : 'img', 'aria-label': t('wf_graph') },
      el('svg:defs', {}, el('svg:marker', { id: box.id + '-arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
        el('svg:path', { d: 'M0 0L10 5L0 10z', class: 'wf-arrow' }))));
    for (const e of g.edges) {
      const a = pos.get(e.from);
      const b = pos.get(e.to);
      if (!a || !b) continue;
      let d;
      let lx;
      let ly;
      if (b.x > a.x) {
        const x1 = a.x + BOX_W;
        const y1 = a.y + BOX_H / 2;
        const x2 = b.x;
        const y2 = b.y + BOX_H / 2;
        const mx = (x1 + x2) / 2;
        d = `M${x1} ${y1}C${mx} ${y1} ${mx} ${y2} ${x2} ${y2}`;
        [lx, ly] = [mx, (y1 + y2) / 2 - 5];
      } else {
        // An edge back (a cycle being edited) loops under the drawing.
        const x1 = a.x + BOX_W / 2;
        const x2 = b.x + BOX_W / 2;
        d = `M${x1} ${a.y + BOX_H}C${x1} ${height - 4} ${x2} ${height - 4} ${x2} ${b.y + BOX_H}`;
        [lx, ly] = [(x1 + x2) / 2, height - 8];
      }
      svg.appendChild(el('svg:path', { class: 'wf-edge wf-when-' + (e.when || 'success'), d, 'marker-end': `url(#${box.id}-arrow)`, dataset: { from: e.from, to: e.to } }));
      const label = whenLabel(e);
      if (label) svg.appendChild(el('svg:text', { class: 'wf-edge-label', x: lx, y: ly, 'text-anchor': 'middle' }, label));
    }
    for (const n of g.nodes) {
      const p = pos.get(n.name);
      const st = o.states && o.states.get(n.name);
      const cls = ['wf-node', st ? 'wf-st-' + st.state : '', o.selected === n.name ? 'wf-selected' : '', o.bad === n.name ? 'wf-bad' : ''].join(' ');
      const sub = st ? stateText(st.state) + (st.attempt > 1 ? ' · ' + st.attempt : '') : jobLabel(n.jobId);
      const gEl = el('svg:g', { class: cls, transform: `translate(${p.x} ${p.y})`, dataset: { node: n.name, state: st ? st.state : '' }, tabindex: o.onNode ? 0 : null },
        el('svg:title', {}, n.name + ' — ' + jobLabel(n.jobId) + (st && st.output ? '\n' + st.output : '')),
        el('svg:rect', { width: BOX_W, height: BOX_H, rx: 8 }),
        el('svg:text', { x: 10, y: 19, class: 'wf-node-name' }, clip(n.name, 22)),
        el('svg:text', { x: 10, y: 36, class: 'wf-node-sub' }, clip(sub, 26)));
      if (o.onNode) {
        gEl.addEventListener('click', () => o.onNode(n.name));
        gEl.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); o.onNode(n.name); } });
      }
      svg.appendChild(gEl);
    }
    box.appendChild(svg);
  }

  const clip = (s, n) => (s.length > n ? s.slice(0, n - 1) + '…' : s);

  // ---- The designer.

  const dlg = document.getElementById('dlg-wf');
  const form = document.getElementById('form-wf');
  const nodesBox = document.getElementById('wf-nodes');
  const edgesBox = document.getElementById('wf-edges');
  const graphBox = document.getElementById('wf-graph');
  const jobSel = document.getElementById('wf-job');
  const nodeName = document.getElementById('wf-node-name');
  const fromSel = document.getElementById('wf-edge-from');
  const toSel = document.getElementById('wf-edge-to');
  const whenSel = document.getElementById('wf-edge-when');
  const fieldIn = document.getElementById('wf-edge-field');
  const equalsIn = document.getElementById('wf-edge-equals');
  let g = { nodes: [], edges: [] };
  let selected = '';
  let bad = '';

  function redraw() {
    clear(nodesBox);
    if (!g.nodes.length) nodesBox.appendChild(el('p', { class: 'muted' }, t('wf_no_nodes')));
    for (const n of g.nodes) {
      const param = el('input', { type: 'text', class: 'mono wf-param', value: n.param || '', placeholder: t('wf_param_ph'), spellcheck: 'false', 'aria-label': n.name + ' · ' + t('wf_col_param'), dataset: { node: n.name } });
      param.addEventListener('input', () => { n.param = param.value; });
      nodesBox.appendChild(el('div', { class: 'wf-row' + (bad === n.name ? ' wf-bad' : ''), dataset: { node: n.name } },
        el('strong', { class: 'mono' }, n.name), el('span', { class: 'muted wf-job' }, jobLabel(n.jobId)), param,
        el('button', { type: 'button', class: 'btn btn-sm btn-ghost', dataset: { action: 'remove-node' }, onclick: () => removeNode(n.name) }, t('wf_remove'))));
    }
    clear(edgesBox);
    g.edges.forEach((e, i) => {
      edgesBox.appendChild(el('div', { class: 'wf-row', dataset: { from: e.from, to: e.to } },
        el('span', { class: 'mono' }, e.from + ' → ' + e.to), el('span', { class: 'muted' }, whenLabel(e) || t('wf_when_success')),
        el('span', { class: 'spacer' }),
        el('button', { type: 'button', class: 'btn btn-sm btn-ghost', dataset: { action: 'remove-edge' }, onclick: () => { g.edges.splice(i, 1); redraw(); } }, t('wf_remove'))));
    });
    for (const sel of [fromSel, toSel]) {
      const keep = sel.value;
      clear(sel);
      for (const n of g.nodes) sel.appendChild(el('option', { value: n.name, selected: n.name === keep }, n.name));
    }
    draw(graphBox, g, { selected, bad, onNode: pick });
  }

  // pick selects a node; a second click on another node connects the two with the
  // condition chosen in the connection row.
  function pick(name) {
    if (selected && selected !== name) {
      fromSel.value = selected;
      toSel.value = name;
      selected = '';
      addEdge();
      return;
    }
    selected = selected === name ? '' : name;
    redraw();
  }

  function removeNode(name) {
    g.nodes = g.nodes.filter((n) => n.name !== name);
    g.edges = g.edges.filter((e) => e.from !== name && e.to !== name);
    if (selected === name) selected = '';
    redraw();
  }

  // suggestName makes a node name from a job's description.
  function suggestName(job) {
    let s = (job ? job.jobDesc : '').replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^[^A-Za-z]+/, '').replace(/_+$/, '').slice(0, 40);
    if (!s) s = 'node';
    let name = s;
    for (let i = 2; g.nodes.some((n) => n.name === name); i++) name = s + '_' + i;
    return name;
  }

  function addNode() {
    const id = +jobSel.value;
    const name = nodeName.value.trim() || suggestName(jobs.get(id));
    if (!id) { formError(form, t('wf_no_jobs')); return; }
    if (!NAME_RE.test(name)) { formError(form, t('wf_bad_node_name')); nodeName.focus(); return; }
    if (g.nodes.some((n) => n.name === name)) { formError(form, t('wf_node_exists', name)); nodeName.focus(); return; }
    g.nodes.push({ name, jobId: id, param: '' });
    nodeName.value = '';
    formError(form, '');
    redraw();
  }

  function addEdge() {
    const e = { from: fromSel.value, to: toSel.value };
    const when = whenSel.value;
    if (!e.from || !e.to) return;
    if (e.from === e.to) { formError(form, t('wf_edge_self')); redraw(); return; }
    if (g.edges.some((x) => x.from === e.from && x.to === e.to)) { formError(form, t('wf_edge_exists', e.from, e.to)); redraw(); return; }
    if (when !== 'success') e.when = when;
    if (when === 'output') {
      if (!equalsIn.value) { formError(form, t('wf_equals_needed')); equalsIn.focus(); redraw(); return; }
      if (fieldIn.value.trim()) e.field = fieldIn.value.trim();
      e.equals = equalsIn.value;
    }
    g.edges.push(e);
    formError(form, '');
    redraw();
  }

  // syncSchedule fits the schedule fields to the schedule type: a manual workflow has
  // neither an expression nor a start on the schedule.
  function syncSchedule() {
    const f = form.elements;
    const type = f.namedItem('scheduleType').value;
    f.namedItem('scheduleConf').disabled = type === 'NONE';
    f.namedItem('scheduleConf').placeholder = type === 'CRON' ? '0 0 1 * * ?' : type === 'FIX_RATE' ? '60' : '';
    f.namedItem('scheduled').disabled = type === 'NONE';
    if (type === 'NONE') f.namedItem('scheduled').checked = false;
  }

  function showOutputFields() {
    for (const f of form.querySelectorAll('.wf-out')) f.hidden = whenSel.value !== 'output';
  }

  async function openDesigner(id) {
    try {
      await loadJobs();
      const w = id ? await api('/workflow/load', { id }) : null;
      form.reset();
      clear(jobSel);
      for (const j of jobs.values()) {
        const grp = groups.get(j.jobGroup);
        jobSel.appendChild(el('option', { value: j.id }, j.jobDesc + ' (#' + j.id + (grp ? ' · ' + grp.title : '') + ')'));
      }
      const f = form.elements;
      f.namedItem('id').value = w ? w.id : '';
      if (w) {
        for (const k of ['name', 'scheduleType', 'scheduleConf', 'misfireStrategy', 'failurePolicy', 'runTimeout']) f.namedItem(k).value = w[k];
        f.namedItem('scheduled').checked = w.scheduled;
      }
      g = w ? { nodes: w.graph.nodes || [], edges: w.graph.edges || [] } : { nodes: [], edges: [] };
      selected = '';
      bad = '';
      $('[data-slot="title"]', dlg).textContent = w ? t('wf_edit_title', w.name) : t('wf_new');
      showOutputFields();
      syncSchedule();
      openDialog(dlg);
      redraw();
      f.namedItem('name').focus();
    } catch (e) {
      toast(e.message, 'error');
    }
  }

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const f = form.elements;
    const name = f.namedItem('name').value.trim();
    if (!name) { formError(form, t('wf_need_name')); f.namedItem('name').focus(); return; }
    const graph = { nodes: g.nodes.map((n) => (n.param ? { name: n.name, jobId: n.jobId, param: n.param } : { name: n.name, jobId: n.jobId })), edges: g.edges };
    const params = {
      id: f.namedItem('id').value || undefined, name, graph: JSON.stringify(graph),
      scheduleType: f.namedItem('scheduleType').value, scheduleConf: f.namedItem('scheduleConf').value.trim(),
      misfireStrategy: f.namedItem('misfireStrategy').value, failurePolicy: f.namedItem('failurePolicy').value,
      runTimeout: f.namedItem('runTimeout').value || '0', scheduled: f.namedItem('scheduled').checked ? '1' : '0',
    };
    await busy(document.getElementById('btn-save-wf'), async () => {
      try {
        await api('/workflow/save', params);
        dlg.close();
        toast(t('common_saved'));
        list.load();
      } catch (err) {
        // A refusal names the node at fault first, in quotes: mark it in the list and
        // the drawing.
        const m = /"([^"]+)"/.exec(err.message);
        bad = m && g.nodes.some((n) => n.name === m[1]) ? m[1] : '';
        redraw();
        formError(form, err.message);
        $('[data-slot="error"]', form).scrollIntoView({ block: 'nearest' });
      }
    });
  });

  document.getElementById('btn-add-node').addEventListener('click', addNode);
  document.getElementById('btn-add-edge').addEventListener('click', addEdge);
  whenSel.addEventListener('change', showOutputFields);
  form.elements.namedItem('scheduleType').addEventListener('change', syncSchedule);
  document.getElementById('btn-new').addEventListener('click', () => openDesigner(0));

  // ---- Run once.

  const trigDlg = document.getElementById('dlg-wf-trigger');
  const trigForm = document.getElementById('form-wf-trigger');
  let trigWf = null;

  function openTrigger(w) {
    trigWf = w;
    trigForm.reset();
    $('[data-slot="title"]', trigDlg).textContent = t('wf_run_once') + ' · ' + w.name;
    openDialog(trigDlg);
    trigForm.elements.namedItem('input').focus();
  }

  trigForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    await busy(document.getElementById('btn-start-run'), async () => {
      try {
        const run = await api('/workflow/trigger', { id: trigWf.id, input: trigForm.elements.namedItem('input').value });
        trigDlg.close();
        toast(t('wf_started', run));
        openRuns(trigWf, run);
      } catch (err) {
        formError(trigForm, err.message);
      }
    });
  });

  // ---- Runs and the run view.

  const runsDlg = document.getElementById('dlg-wf-runs');
  const runsPane = document.getElementById('wf-runs-pane');
  const runPane = document.getElementById('wf-run-pane');
  const runsBody = $('#wf-runs-table tbody');
  const nodesBody = $('#wf-nodes-table tbody');
  let runsWf = null;
  let runsOffset = 0;
  let shownRun = 0;
  let pollTimer = 0;
  const RUNS_PAGE = 20;

  async function openRuns(w, runID) {
    runsWf = w;
    runsOffset = 0;
    $('[data-slot="title"]', runsDlg).textContent = t('wf_runs_title', w.name);
    openDialog(runsDlg);
    try { await loadJobs(); } catch (e) { /* job names fall back to ids */ }
    if (runID) showRun(runID);
    else showRuns();
  }

  async function showRuns() {
    clearTimeout(pollTimer);
    shownRun = 0;
    runPane.hidden = true;
    runsPane.hidden = false;
    try {
      const page = await api('/workflow/runs', { id: runsWf.id, offset: runsOffset, pagesize: RUNS_PAGE });
      clear(runsBody);
      const rows = page.data || [];
      if (!rows.length) runsBody.appendChild(el('tr', { class: 'placeholder' }, el('td', { colspan: 8 }, t('common_empty'))));
      for (const r of rows) {
        runsBody.appendChild(el('tr', { dataset: { run: r.id, state: r.state } },
          el('td', { class: 'col-id mono' }, String(r.id)), el('td', {}, stateBadge(r.state)),
          el('td', {}, (TRIGGER_TEXT[r.triggerType] || r.triggerType) + (r.createUser ? ' · ' + r.createUser : '')), el('td', { class: 'mono' }, clip(r.input || '', 40)),
          el('td', { class: 'mono' }, r.startTime || ''), el('td', { class: 'mono' }, r.endTime || ''), el('td', {}, r.msg || ''),
          el('td', { class: 'col-actions' }, el('button', { type: 'button', class: 'btn btn-sm', dataset: { action: 'view' }, onclick: () => showRun(r.id) }, t('wf_view')))));
      }
      const pager = clear(document.getElementById('wf-runs-pager'));
      const total = page.total || 0;
      pager.appendChild(el('span', { class: 'pager-info' }, t('pager_total', total.toLocaleString())));
      pager.appendChild(el('span', { class: 'spacer' }));
      pager.appendChild(el('button', { type: 'button', class: 'btn btn-sm', disabled: runsOffset <= 0, onclick: () => { runsOffset = Math.max(0, runsOffset - RUNS_PAGE); showRuns(); } }, '‹ ' + t('pager_prev')));
      pager.appendChild(el('button', { type: 'button', class: 'btn btn-sm', disabled: runsOffset + RUNS_PAGE >= total, onclick: () => { runsOffset += RUNS_PAGE; showRuns(); } }, t('pager_next') + ' ›'));
    } catch (e) {
      clear(runsBody);
      runsBody.appendChild(el('tr', { class: 'placeholder error' }, el('td', { colspan: 8 }, e.message)));
    }
  }

  // showRun draws one run and looks again every second while it is running.
  async function showRun(id) {
    clearTimeout(pollTimer);
    shownRun = id;
    runsPane.hidden = true;
    runPane.hidden = false;
    let r;
    try {
      r = await api('/workflow/run', { runId: id });
    } catch (e) {
      toast(e.message, 'error');
      return;
    }
    if (shownRun !== id || !runsDlg.open) return;
    runPane.dataset.run = r.id;
    runPane.dataset.state = r.state;
    document.getElementById('wf-run-title').textContent = t('wf_run_title', r.id);
    append(clear(document.getElementById('wf-run-state')), [stateBadge(r.state)]);
    document.getElementById('wf-run-msg').textContent = r.msg || '';
    document.getElementById('btn-run-cancel').hidden = r.state !== 'running';
    document.getElementById('btn-run-rerun').hidden = r.state !== 'failed' && r.state !== 'cancelled';
    const states = new Map((r.nodes || []).map((n) => [n.name, n]));
    draw(document.getElementById('wf-run-graph'), r.graph || { nodes: [], edges: [] }, { states });
    clear(nodesBody);
    for (const n of r.nodes || []) {
      nodesBody.appendChild(el('tr', { dataset: { node: n.name, state: n.state } },
        el('td', { class: 'mono strong' }, n.name), el('td', {}, jobLabel(n.jobId)),
        el('td', {}, stateBadge(n.state), n.msg ? el('div', { class: 'muted wf-cell wf-node-msg' }, n.msg) : null), el('td', {}, n.attempt ? String(n.attempt) : ''),
        el('td', { class: 'mono wf-cell' }, n.param || ''), el('td', { class: 'mono wf-cell wf-output' }, n.output || ''),
        el('td', { class: 'mono' }, n.startTime || ''), el('td', { class: 'mono' }, n.endTime || ''),
        el('td', {}, n.logId ? el('a', { href: boot.base + '/joblog/logDetailPage?id=' + n.logId, target: '_blank', rel: 'noopener', dataset: { action: 'log' } }, t('wf_log') + ' #' + n.logId) : '')));
    }
    if (r.state === 'running') pollTimer = setTimeout(() => { if (shownRun === id && runsDlg.open) showRun(id); }, 1000);
  }

  async function runChange(path, ask, done) {
    const id = shownRun;
    if (ask && !(await confirmDialog(ask, { ok: t('wf_cancel_run'), danger: true }))) return;
    try {
      await api(path, { runId: id });
      toast(done);
      showRun(id);
    } catch (e) {
      toast(e.message, 'error');
    }
  }

  document.getElementById('btn-run-back').addEventListener('click', showRuns);
  document.getElementById('btn-run-cancel').addEventListener('click', () => runChange('/workflow/cancel', t('wf_cancel_ask', shownRun), t('wf_cancelled_ok')));
  document.getElementById('btn-run-rerun').addEventListener('click', () => runChange('/workflow/rerun', '', t('wf_rerun_ok')));
  runsDlg.addEventListener('close', () => { clearTimeout(pollTimer); shownRun = 0; list.load(); });

  list.load();
})();
