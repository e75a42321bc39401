// The list pages' script: every page drawn by the list partial (templates/list.html)
// describes its filters, endpoint and row, and App.listPage does the rest — the
// filter form, the query string, the pager, loading and error rows, and the row
// menus, whose box is placed in the viewport so no scroll wrapper can cut it.
'use strict';

(() => {
  const { t, el, clear, append, $, api, closeMenus } = App;
  const SIZES = [10, 20, 50, 100];

  // pager renders paging controls and calls onChange(offset, size).
  function pager(container, onChange) {
    let state = { total: 0, offset: 0, size: 20 };
    function go(offset) { onChange(Math.max(0, offset), state.size); }
    function render(total, offset, size) {
      state = { total, offset, size };
      const pages = Math.max(1, Math.ceil(total / size));
      const page = Math.floor(offset / size) + 1;
      const sel = el('select', { 'aria-label': t('pager_size'), class: 'pager-size', onchange: (e) => { state.size = +e.target.value; onChange(0, state.size); } },
        SIZES.map((s) => el('option', { value: s, selected: s === size }, String(s))));
      const num = el('input', { type: 'number', min: 1, max: pages, value: page, class: 'pager-num', 'aria-label': t('pager_goto') });
      num.addEventListener('change', () => {
        const p = Math.min(pages, Math.max(1, parseInt(num.value, 10) || 1));
        go((p - 1) * size);
      });
      const first = total === 0 ? 0 : offset + 1;
      const last = Math.min(total, offset + size);
      clear(container);
      append(container, [
        el('span', { class: 'pager-info' }, t('pager_total', total.toLocaleString()), total ? ' · ' + t('pager_showing', first, last) : ''),
        el('span', { class: 'spacer' }),
        el('label', { class: 'pager-label' }, t('pager_size'), sel),
        el('button', { type: 'button', class: 'btn btn-sm', disabled: page <= 1, title: t('pager_first'), 'aria-label': t('pager_first'), onclick: () => go(0) }, '«'),
        el('button', { type: 'button', class: 'btn btn-sm', disabled: page <= 1, onclick: () => go(offset - size) }, '‹ ' + t('pager_prev')),
        el('span', { class: 'pager-page' }, num, ' / ' + pages),
        el('button', { type: 'button', class: 'btn btn-sm', disabled: page >= pages, onclick: () => go(offset + size) }, t('pager_next') + ' ›'),
        el('button', { type: 'button', class: 'btn btn-sm', disabled: page >= pages, title: t('pager_last'), 'aria-label': t('pager_last'), onclick: () => go((pages - 1) * size) }, '»'),
      ]);
    }
    return { render };
  }

  // tableRows fills a tbody with rows, or a one-cell message row.
  function tableRows(tbody, rows, cols, make) {
    clear(tbody);
    if (!rows || rows.length === 0) {
      tbody.appendChild(el('tr', { class: 'placeholder' }, el('td', { colspan: cols }, t('common_empty'))));
      return;
    }
    rows.forEach((r) => tbody.appendChild(make(r)));
  }

  function tableMessage(tbody, cols, msg, kind) {
    clear(tbody);
    tbody.appendChild(el('tr', { class: 'placeholder ' + (kind || '') }, el('td', { colspan: cols }, msg)));
  }

  // placeMenu puts an open row menu in the viewport, fixed beside its button: below
  // when it fits there, else above, else where most of it shows, scrolling inside
  // itself when the viewport is shorter than the menu. Fixed boxes escape the table's
  // scroll wrapper, which would otherwise cut them.
  function placeMenu(btn, list) {
    const gap = 6;
    const margin = 8;
    list.style.maxHeight = '';
    list.style.position = 'fixed';
    const r = btn.getBoundingClientRect();
    const vw = document.documentElement.clientWidth;
    const vh = window.innerHeight;
    const h = list.offsetHeight;
    const w = list.offsetWidth;
    const below = vh - r.bottom - gap - margin;
    const above = r.top - gap - margin;
    let top;
    if (h <= below) top = r.bottom + gap;
    else if (h <= above) top = r.top - gap - h;
    else if (below >= above) { top = r.bottom + gap; list.style.maxHeight = below + 'px'; }
    else { list.style.maxHeight = above + 'px'; top = r.top - gap - list.offsetHeight; }
    const left = Math.max(margin, Math.min(r.right - w, vw - w - margin));
    list.classList.toggle('up', top < r.top);
    list.style.top = Math.round(top) + 'px';
    list.style.left = Math.round(left) + 'px';
    list.style.right = 'auto';
    list.style.bottom = 'auto';
  }

  // A fixed menu does not follow its row: scrolling or resizing closes it.
  const closeOpenRowMenu = () => { if ($('.row-menu:not([hidden])')) closeMenus(); };
  window.addEventListener('resize', closeOpenRowMenu);
  document.addEventListener('scroll', (e) => { if (!(e.target instanceof Element && e.target.closest('.row-menu'))) closeOpenRowMenu(); }, true);

  // rowMenu builds a row's action dropdown from items ({label, action, run, danger},
  // '-' for a separator; falsy items are left out).
  function rowMenu(items) {
    const list = el('div', { class: 'menu row-menu', role: 'menu', hidden: true });
    const btn = el('button', { type: 'button', class: 'btn btn-sm menu-btn', 'aria-haspopup': 'menu', 'aria-expanded': 'false' }, t('common_actions'), el('span', { class: 'caret', 'aria-hidden': 'true' }));
    for (const it of items) {
      if (!it) continue;
      if (it === '-') { list.appendChild(el('hr')); continue; }
      list.appendChild(el('button', {
        type: 'button', role: 'menuitem', class: it.danger ? 'danger' : '', dataset: { action: it.action || '' },
        onclick: () => { closeMenus(); it.run(); },
      }, it.label));
    }
    btn.addEventListener('click', (e) => {
      e.stopPropagation();
      const open = list.hidden;
      closeMenus();
      if (open) {
        list.hidden = false;
        btn.setAttribute('aria-expanded', 'true');
        placeMenu(btn, list);
      }
    });
    return el('div', { class: 'menu-wrap' }, btn, list);
  }

  // Query-string state of list pages.
  function readQuery() { return new URLSearchParams(window.location.search); }
  function writeQuery(params) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== '' && v !== undefined && v !== null) q.set(k, v);
    const s = q.toString();
    window.history.replaceState(null, '', window.location.pathname + (s ? '?' + s : ''));
  }

  // fieldValue reads a filter field: its trimmed value, a checkbox's value or '0'.
  function fieldValue(f) {
    if (f.type === 'checkbox') return f.checked ? f.value || '1' : '0';
    return String(f.value).trim();
  }

  function setField(f, v) {
    if (f.type === 'checkbox') f.checked = v === (f.value || '1');
    else f.value = v;
  }

  // listPage wires the page's filter form (#filters), table (cfg.table), count badge
  // and pager, and returns { load, reload, state }; the page calls load() once it has
  // set itself up. cfg:
  //   endpoint   the pageList path posted with the filters, offset and pagesize
  //   table      the table's id
  //   fields     filter field name → its "no filter" value, left out of the URL
  //   reloadOn   names of fields whose change reloads at once
  //   row(r)     builds a row's <tr>
  //   params()   more request parameters, computed at each load (override fields)
  //   query()    more query-string entries, computed at each load
  //   prepare    async (rows) run before the rows are drawn (e.g. name look-ups)
  //   again(rows) true to look again in a few seconds (rows still changing)
  //   submit     async () → false to keep the list (the form's input is refused)
  //   reset()    after the form's reset, before the reload
  function listPage(cfg) {
    const filters = document.getElementById('filters');
    const tbody = $('#' + cfg.table + ' tbody');
    const cols = $('#' + cfg.table + ' thead tr').cells.length;
    const totalBadge = document.getElementById('total-badge');
    const fields = cfg.fields || {};
    const q = readQuery();
    const state = {
      offset: Math.max(0, parseInt(q.get('offset'), 10) || 0),
      size: SIZES.includes(+q.get('size')) ? +q.get('size') : 20,
    };
    const field = (name) => filters.elements.namedItem(name);
    for (const name of Object.keys(fields)) if (q.has(name)) setField(field(name), q.get(name));
    const pg = pager(document.getElementById('pager'), (offset, size) => { state.offset = offset; state.size = size; load(); });

    let seq = 0;
    let againTimer = 0;
    async function load() {
      const my = ++seq;
      clearTimeout(againTimer);
      const f = {};
      for (const name of Object.keys(fields)) f[name] = fieldValue(field(name));
      Object.assign(f, cfg.params ? cfg.params() : {});
      const shown = {};
      for (const [name, def] of Object.entries(fields)) shown[name] = f[name] === def ? '' : f[name];
      writeQuery({ ...shown, ...(cfg.query ? cfg.query() : {}), offset: state.offset || '', size: state.size === 20 ? '' : state.size });
      tbody.classList.add('loading');
      try {
        const page = await api(cfg.endpoint, { ...f, offset: state.offset, pagesize: state.size });
        if (my !== seq) return;
        const rows = page.data || [];
        const total = page.total || 0;
        if (rows.length === 0 && total > 0 && state.offset >= total) {
          state.offset = Math.max(0, (Math.ceil(total / state.size) - 1) * state.size);
          load();
          return;
        }
        if (cfg.prepare) await cfg.prepare(rows);
        if (my !== seq) return;
        totalBadge.textContent = total.toLocaleString();
        tableRows(tbody, rows, cols, cfg.row);
        pg.render(total, state.offset, state.size);
        if (cfg.again && cfg.again(rows)) {
          againTimer = setTimeout(() => { if (!document.hidden && !document.querySelector('dialog[open]')) load(); }, 5000);
        }
      } catch (e) {
        if (my === seq) tableMessage(tbody, cols, e.message, 'error');
      } finally {
        if (my === seq) tbody.classList.remove('loading');
      }
    }

    function reload() { state.offset = 0; load(); }

    filters.addEventListener('submit', async (e) => {
      e.preventDefault();
      if (cfg.submit && !(await cfg.submit())) return;
      reload();
    });
    filters.addEventListener('reset', () => setTimeout(() => { if (cfg.reset) cfg.reset(); reload(); }, 0));
    for (const name of cfg.reloadOn || []) field(name).addEventListener('change', reload);
    const refresh = document.getElementById('btn-refresh');
    if (refresh) refresh.addEventListener('click', () => load());
    return { load, reload, state, filters };
  }

  Object.assign(App, { listPage, rowMenu, readQuery, writeQuery });
})();
