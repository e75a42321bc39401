// Overview page: runs per day over a chosen range (stacked bars) and the share of
// outcomes (donut), drawn as inline SVG from /chartInfo.
'use strict';

(() => {
  const { t, el, clear, api, range, $$ } = App;
  const form = document.getElementById('range-form');
  const fromIn = document.getElementById('range-from');
  const toIn = document.getElementById('range-to');
  const dayBox = document.getElementById('chart-days');
  const shareBox = document.getElementById('chart-share');
  const series = [
    { key: 'suc', cls: 'success', label: t('status_success') },
    { key: 'fail', cls: 'failed', label: t('status_failed') },
    { key: 'running', cls: 'running', label: t('status_running') },
  ];
  let last = null;

  function setRange(name) {
    const r = range(name);
    if (!r) return;
    fromIn.value = r[0];
    toIn.value = r[1];
    $$('[data-range]', form).forEach((b) => b.classList.toggle('active', b.dataset.range === name));
    load();
  }

  // days lists every day from a to b (yyyy-MM-dd), at most 400.
  function days(a, b) {
    const out = [];
    let d = new Date(a + 'T00:00:00Z');
    const end = new Date(b + 'T00:00:00Z');
    while (d <= end && out.length < 400) {
      out.push(d.toISOString().slice(0, 10));
      d = new Date(d.getTime() + 86400000);
    }
    return out;
  }

  async function load() {
    let a = fromIn.value;
    let b = toIn.value;
    if (!a || !b) return;
    if (a > b) [a, b] = [b, a];
    clear(dayBox).appendChild(el('p', { class: 'muted' }, t('common_loading')));
    try {
      const c = await api('/chartInfo', { startDate: a + ' 00:00:00', endDate: b + ' 23:59:59' });
      const byDay = {};
      (c.triggerDayList || []).forEach((d, i) => {
        byDay[d] = {
          suc: (c.triggerDayCountSucList || [])[i] || 0,
          fail: (c.triggerDayCountFailList || [])[i] || 0,
          running: (c.triggerDayCountRunningList || [])[i] || 0,
        };
      });
      const list = days(a, b).map((d) => ({ day: d, ...(byDay[d] || { suc: 0, fail: 0, running: 0 }) }));
      last = {
        list,
        totals: { suc: c.triggerCountSucTotal || 0, fail: c.triggerCountFailTotal || 0, running: c.triggerCountRunningTotal || 0 },
      };
      draw();
    } catch (e) {
      clear(dayBox).appendChild(el('p', { class: 'form-error' }, t('dash_chart_failed') + ' ' + e.message));
      clear(shareBox);
    }
  }

  // yScale chooses the y axis of counts up to v: a step of 1, 2 or 5 times a power of
  // ten (or 25 times one), at most five steps, so every grid line sits at a whole
  // count and its label says exactly that count.
  function yScale(v) {
    const top = Math.max(4, v);
    for (let p = 1; ; p *= 10) {
      for (const m of [1, 2, 2.5, 5]) {
        const step = m * p;
        if (!Number.isInteger(step)) continue;
        const n = Math.ceil(top / step);
        if (n <= 5) return { step, n, max: step * n };
      }
    }
  }

  function draw() {
    if (!last) return;
    drawDays(last.list);
    drawShare(last.totals);
  }

  function drawDays(list) {
    const W = Math.max(320, dayBox.clientWidth || 640);
    const H = 280;
    const m = { l: 48, r: 12, t: 12, b: 34 };
    const iw = W - m.l - m.r;
    const ih = H - m.t - m.b;
    const scale = yScale(Math.max(...list.map((d) => d.suc + d.fail + d.running)));
    const max = scale.max;
    const svg = el('svg:svg', { viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, class: 'chart-svg', role: 'img', 'aria-label': t('dash_chart') });
    for (let i = 0; i <= scale.n; i++) {
      const y = m.t + ih - (ih * i) / scale.n;
      svg.appendChild(el('svg:line', { x1: m.l, x2: W - m.r, y1: y, y2: y, class: i === 0 ? 'axis' : 'grid', dataset: { value: scale.step * i } }));
      svg.appendChild(el('svg:text', { x: m.l - 8, y: y + 4, class: 'tick tick-y', 'text-anchor': 'end' }, (scale.step * i).toLocaleString()));
    }
    const slot = iw / list.length;
    const bw = Math.max(2, Math.min(36, slot * 0.62));
    const every = Math.max(1, Math.ceil(48 / slot));
    list.forEach((d, i) => {
      const x = m.l + slot * i + (slot - bw) / 2;
      let y = m.t + ih;
      const g = el('svg:g', { class: 'bar' });
      g.appendChild(el('svg:title', {}, d.day + '\n' + series.map((s) => s.label + ': ' + d[s.key]).join('\n')));
      g.appendChild(el('svg:rect', { x: m.l + slot * i, y: m.t, width: slot, height: ih, class: 'hover-zone' }));
      for (const s of series) {
        const h = (ih * d[s.key]) / max;
        if (h <= 0) continue;
        y -= h;
        g.appendChild(el('svg:rect', { x, y, width: bw, height: h, rx: Math.min(3, bw / 4), class: 'bar-' + s.cls }));
      }
      svg.appendChild(g);
      if (i % every === 0) {
        svg.appendChild(el('svg:text', { x: m.l + slot * i + slot / 2, y: H - 12, class: 'tick', 'text-anchor': 'middle' }, d.day.slice(5)));
      }
    });
    const empty = list.every((d) => d.suc + d.fail + d.running === 0);
    clear(dayBox).appendChild(svg);
    if (empty) dayBox.appendChild(el('p', { class: 'chart-empty muted' }, t('dash_no_runs')));
  }

  function arc(cx, cy, r, a0, a1) {
    const p = (a) => [cx + r * Math.sin(a), cy - r * Math.cos(a)];
    const [x0, y0] = p(a0);
    const [x1, y1] = p(a1);
    return 'M' + x0 + ' ' + y0 + 'A' + r + ' ' + r + ' 0 ' + (a1 - a0 > Math.PI ? 1 : 0) + ' 1 ' + x1 + ' ' + y1;
  }

  function drawShare(tot) {
    const sum = tot.suc + tot.fail + tot.running;
    const S = 200;
    const svg = el('svg:svg', { viewBox: '0 0 ' + S + ' ' + S, width: S, height: S, class: 'donut', role: 'img', 'aria-label': t('dash_share') });
    svg.appendChild(el('svg:circle', { cx: S / 2, cy: S / 2, r: 70, class: 'donut-track' }));
    let a = 0;
    for (const s of series) {
      const v = tot[s.key];
      if (!sum || !v) continue;
      const span = (v / sum) * Math.PI * 2;
      const path = span >= Math.PI * 2 - 1e-6
        ? el('svg:circle', { cx: S / 2, cy: S / 2, r: 70, class: 'donut-' + s.cls })
        : el('svg:path', { d: arc(S / 2, S / 2, 70, a, a + span), class: 'donut-' + s.cls });
      path.appendChild(el('svg:title', {}, s.label + ': ' + v));
      svg.appendChild(path);
      a += span;
    }
    svg.appendChild(el('svg:text', { x: S / 2, y: S / 2 + 2, class: 'donut-total', 'text-anchor': 'middle' }, sum.toLocaleString()));
    svg.appendChild(el('svg:text', { x: S / 2, y: S / 2 + 22, class: 'donut-sub', 'text-anchor': 'middle' }, t('dash_runs')));
    const legend = el('ul', { class: 'share-list' }, series.map((s) => el('li', { class: 'lg-' + s.cls },
      el('span', { class: 'share-label' }, s.label),
      el('span', { class: 'share-value' }, tot[s.key].toLocaleString() + (sum ? ' · ' + ((tot[s.key] * 100) / sum).toFixed(1) + '%' : '')))));
    clear(shareBox);
    shareBox.appendChild(svg);
    shareBox.appendChild(legend);
  }

  $$('[data-range]', form).forEach((b) => b.addEventListener('click', () => setRange(b.dataset.range)));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    $$('[data-range]', form).forEach((b) => b.classList.remove('active'));
    load();
  });
  let resizeTimer = 0;
  window.addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(draw, 150);
  });
  setRange('week');
})();
