// Shared helpers of every console page: the JSON calls, DOM building (text only, never
// markup from data), dialogs, toasts, dates in the server's zone, and the
// header's language switch, password change and sign-out.
'use strict';

const App = (() => {
  const boot = JSON.parse(document.getElementById('boot').textContent || '{}');
  const texts = boot.i18n || {};

  // t returns a UI text with {0}, {1}, … filled.
  function t(key, ...args) {
    let s = Object.prototype.hasOwnProperty.call(texts, key) ? texts[key] : key;
    args.forEach((a, i) => { s = s.split('{' + i + '}').join(String(a)); });
    return s;
  }

  // el builds an element. Strings among the children become text nodes, so data never
  // turns into markup.
  function el(tag, attrs, ...children) {
    const svg = tag.startsWith('svg:');
    const node = svg ? document.createElementNS('http://www.w3.org/2000/svg', tag.slice(4)) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') node.setAttribute('class', v);
      else if (k === 'text') node.textContent = String(v);
      else if (k.startsWith('on') && typeof v === 'function') node.addEventListener(k.slice(2), v);
      else if (k === 'dataset') Object.assign(node.dataset, v);
      else node.setAttribute(k, v === true ? '' : String(v));
    }
    append(node, children);
    return node;
  }

  function append(node, children) {
    for (const c of children) {
      if (c === undefined || c === null || c === false) continue;
      if (Array.isArray(c)) append(node, c);
      else if (c instanceof Node) node.appendChild(c);
      else node.appendChild(document.createTextNode(String(c)));
    }
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }

  const $ = (sel, root) => (root || document).querySelector(sel);
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));

  class ApiError extends Error {}

  function toLogin() {
    window.location.assign(boot.base + '/auth/login');
  }

  // api posts form parameters to a console endpoint and returns the payload of a
  // success envelope; a failure envelope throws ApiError with the server's message.
  async function api(path, params) {
    return (await apiReply(path, params)).data;
  }

  // apiReply is api that also returns the success envelope's msg: a save can succeed
  // with a warning the user must read.
  async function apiReply(path, params) {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(params || {})) {
      if (v === undefined || v === null) continue;
      if (Array.isArray(v)) v.forEach((x) => body.append(k, String(x)));
      else body.append(k, String(v));
    }
    let res;
    try {
      res = await fetch(boot.base + path, {
        method: 'POST', body, credentials: 'same-origin', redirect: 'manual',
        headers: { Accept: 'application/json', 'X-Xxl-Admin-Lang': boot.lang || '' },
      });
    } catch (e) {
      throw new ApiError(t('common_network'));
    }
    if (res.type === 'opaqueredirect' || res.status === 302) {
      toLogin();
      throw new ApiError(t('common_session'));
    }
    let j;
    try {
      j = await res.json();
    } catch (e) {
      throw new ApiError(t('common_failed') + ' (HTTP ' + res.status + ')');
    }
    if (Object.prototype.hasOwnProperty.call(j, 'recordsTotal')) return { data: j, msg: '' };
    if (j.code !== 200) {
      const msg = typeof j.msg === 'string' && j.msg ? j.msg : t('common_failed');
      if (msg.startsWith('not login for path')) {
        toLogin();
        throw new ApiError(t('common_session'));
      }
      throw new ApiError(msg);
    }
    // A success's msg is the dialect's own text ("Success" from 3.3 on) unless the
    // server marks it as a warning about what was saved.
    const warning = res.headers.get('X-Xxl-Admin-Warning') && typeof j.msg === 'string' ? j.msg : '';
    return { data: j.data !== undefined ? j.data : j.content, msg: warning };
  }

  // Toasts.
  function toast(msg, kind) {
    const box = document.getElementById('toasts');
    if (!box) return;
    const n = el('div', { class: 'toast toast-' + (kind || 'ok') }, msg);
    box.appendChild(n);
    setTimeout(() => n.classList.add('leaving'), 3200);
    setTimeout(() => n.remove(), 3600);
  }

  // Dialogs: native <dialog> elements from the page's markup.
  function openDialog(dlg) {
    if (!dlg.dataset.wired) {
      dlg.dataset.wired = '1';
      $$('[data-close]', dlg).forEach((b) => b.addEventListener('click', () => dlg.close('cancel')));
      // An error answers the input it was given: once that changes, it goes.
      const form = $('form', dlg);
      if (form) for (const ev of ['input', 'change']) form.addEventListener(ev, () => formError(form, ''));
    }
    const err = $('[data-slot="error"]', dlg);
    if (err) { err.hidden = true; err.textContent = ''; }
    if (!dlg.open) dlg.showModal();
  }

  function formError(form, msg) {
    const err = $('[data-slot="error"]', form);
    if (!err) { toast(msg, 'error'); return; }
    err.textContent = msg || '';
    err.hidden = !msg;
  }

  function confirmDialog(message, opts) {
    const dlg = document.getElementById('dlg-confirm');
    const o = opts || {};
    $('[data-slot="title"]', dlg).textContent = o.title || t('common_confirm');
    $('[data-slot="message"]', dlg).textContent = message;
    const ok = $('[data-slot="ok"]', dlg);
    ok.textContent = o.ok || t('common_ok');
    ok.className = 'btn ' + (o.danger ? 'btn-danger' : 'btn-primary');
    dlg.returnValue = '';
    return new Promise((resolve) => {
      dlg.addEventListener('close', () => resolve(dlg.returnValue === 'ok'), { once: true });
      dlg.showModal();
      ok.focus();
    });
  }

  // confirmDelete asks, then deletes one row through a `…/delete` endpoint taking
  // ids[], reports the outcome and calls done (the page's reload) on success.
  async function confirmDelete(question, path, id, done) {
    if (!(await confirmDialog(question, { ok: t('common_delete'), danger: true }))) return;
    try {
      await api(path, { 'ids[]': id });
      toast(t('common_deleted'));
      done();
    } catch (e) {
      toast(e.message, 'error');
    }
  }

  // saveForm posts a dialog's form: on success it closes the dialog, says so (with the
  // server's warning in a dialog that stays until read, when it sent one) and calls
  // done; otherwise it shows the error inside the form.
  async function saveForm(button, form, dlg, path, params, done) {
    await busy(button, async () => {
      try {
        const { msg } = await apiReply(path, params);
        dlg.close();
        if (msg) infoDialog(t('common_saved_warn'), el('p', { class: 'form-error', role: 'alert', 'data-slot': 'warning' }, msg));
        else toast(t('common_saved'));
        done();
      } catch (err) {
        formError(form, err.message);
      }
    });
  }

  function infoDialog(title, body) {
    const dlg = document.getElementById('dlg-info');
    $('[data-slot="title"]', dlg).textContent = title;
    const slot = clear($('[data-slot="body"]', dlg));
    append(slot, [body]);
    dlg.showModal();
  }

  // busy disables a form's submit button while a call runs.
  async function busy(button, fn) {
    if (button) button.disabled = true;
    try {
      return await fn();
    } finally {
      if (button) button.disabled = false;
    }
  }

  // Dates in the server's zone (DATETIME columns and schedules live there).
  let zoneFmt = null;
  try {
    if (boot.zone) {
      zoneFmt = new Intl.DateTimeFormat('en-GB', {
        timeZone: boot.zone, year: 'numeric', month: '2-digit', day: '2-digit',
        hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23',
      });
    }
  } catch (e) {
    zoneFmt = null;
  }

  function partsOf(ms) {
    if (zoneFmt) {
      const p = {};
      for (const x of zoneFmt.formatToParts(new Date(ms))) p[x.type] = x.value;
      return { y: +p.year, m: +p.month, d: +p.day, H: +p.hour % 24, M: +p.minute, S: +p.second };
    }
    const d = new Date(ms + (boot.zoneOffset || 0) * 60000);
    return { y: d.getUTCFullYear(), m: d.getUTCMonth() + 1, d: d.getUTCDate(), H: d.getUTCHours(), M: d.getUTCMinutes(), S: d.getUTCSeconds() };
  }

  const pad = (n, w) => String(n).padStart(w || 2, '0');
  const fmtParts = (p) => p.y + '-' + pad(p.m) + '-' + pad(p.d) + ' ' + pad(p.H) + ':' + pad(p.M) + ':' + pad(p.S);

  function fmtMs(ms) { return ms ? fmtParts(partsOf(ms)) : ''; }

  // fmtDate shows a JSON date: ISO-8601 (≤ v3.4.0 answers) converted to the server's
  // zone, a plain "yyyy-MM-dd HH:mm:ss" string shown as it is, epoch millis formatted.
  function fmtDate(v) {
    if (v === null || v === undefined || v === '') return '';
    if (typeof v === 'number') return fmtMs(v);
    if (String(v).includes('T')) {
      const ms = Date.parse(v);
      return Number.isNaN(ms) ? String(v) : fmtMs(ms);
    }
    return String(v);
  }

  // Calendar arithmetic on server-zone dates, done on UTC dates as plain calendars.
  const civil = (y, m, d) => new Date(Date.UTC(y, m - 1, d));
  const ymd = (dt) => dt.getUTCFullYear() + '-' + pad(dt.getUTCMonth() + 1) + '-' + pad(dt.getUTCDate());
  const addDays = (dt, n) => new Date(dt.getTime() + n * 86400000);

  // range returns [from, to] dates ("yyyy-MM-dd") of a named range, in the server zone.
  function range(name) {
    const now = partsOf(Date.now());
    const today = civil(now.y, now.m, now.d);
    switch (name) {
      case 'today': return [ymd(today), ymd(today)];
      case 'yesterday': return [ymd(addDays(today, -1)), ymd(addDays(today, -1))];
      case 'week': return [ymd(addDays(today, -6)), ymd(today)];
      case 'month': return [ymd(addDays(today, -29)), ymd(today)];
      case 'thisMonth': return [ymd(civil(now.y, now.m, 1)), ymd(addDays(civil(now.y, now.m + 1, 1), -1))];
      case 'lastMonth': return [ymd(civil(now.y, now.m - 1, 1)), ymd(addDays(civil(now.y, now.m, 1), -1))];
    }
    return null;
  }

  // serverNow is "yyyy-MM-dd HH:mm:ss" of now (minus ms) in the server zone.
  function serverTime(msAgo) { return fmtParts(partsOf(Date.now() - (msAgo || 0))); }

  function closeMenus() {
    $$('.menu').forEach((m) => {
      if (m.id === 'user-menu' || m.classList.contains('row-menu')) m.hidden = true;
    });
    $$('[aria-expanded="true"]').forEach((b) => b.setAttribute('aria-expanded', 'false'));
  }
  document.addEventListener('click', (e) => {
    if (!e.target.closest('.menu')) closeMenus();
  });
  document.addEventListener('keydown', (e) => { if (e.key === 'Escape') closeMenus(); });

  // badge is a coloured status label.
  const badge = (text, kind) => el('span', { class: 'badge badge-' + kind }, text);

  // reword says a stored message in the page's language: the admin wrote its fixed
  // texts in the language configured then (boot.rewordings pairs them with this
  // language's). A trigger message is the admin's throughout; a result message
  // ('result') is the executor's unless it is one fixed text as a whole.
  const rewordings = boot.rewordings || [];
  function reword(s, kind) {
    if (kind === 'result') {
      const p = rewordings.find((x) => x[0] === s.trim());
      return p ? p[1] : s;
    }
    for (const [from, to] of rewordings) s = s.split(from).join(to);
    return s;
  }

  // msgText turns an admin-written HTML fragment (trigger and result messages keep
  // <br> and a few spans) into plain text lines without interpreting it; kind
  // ('trigger' or 'result') rewords it into the page's language.
  function msgText(html, kind) {
    if (!html) return '';
    if (kind) html = reword(String(html), kind);
    const ents = { lt: '<', gt: '>', amp: '&', quot: '"', '#39': "'", '#x27': "'", nbsp: ' ' };
    return String(html)
      .replace(/<br\s*\/?>/gi, '\n')
      .replace(/<\/?(?:span|b|strong|font|i|em|p|div)(?:\s[^<>]*)?>/gi, '')
      .replace(/&(lt|gt|amp|quot|#39|#x27|nbsp);/g, (m, e) => ents[e])
      .replace(/\n{3,}/g, '\n\n')
      .trim();
  }

  function msgBlock(html, kind) { return el('div', { class: 'msg-text' }, msgText(html, kind)); }

  // Header: language switch, user menu, password change, sign-out, sidebar toggle.
  function initChrome() {
    const sw = document.getElementById('lang-switch');
    if (sw) {
      sw.addEventListener('change', () => {
        document.cookie = 'xxl_admin_lang=' + encodeURIComponent(sw.value) + '; Path=/; Max-Age=31536000; SameSite=Lax';
        window.location.reload();
      });
    }
    const ub = document.getElementById('user-btn');
    const um = document.getElementById('user-menu');
    if (ub && um) {
      ub.addEventListener('click', (e) => {
        e.stopPropagation();
        const open = um.hidden;
        closeMenus();
        um.hidden = !open;
        ub.setAttribute('aria-expanded', String(open));
      });
    }
    const so = document.getElementById('btn-sign-out');
    if (so) {
      so.addEventListener('click', async () => {
        closeMenus();
        if (!(await confirmDialog(t('sign_out_ask'), { ok: t('sign_out') }))) return;
        let end = null;
        try {
          const r = await api('/auth/logout');
          end = r && r.endSessionUrl;
        } catch (e) { /* the cookie is gone either way */ }
        // After a sign-in through an identity provider, its session ends too.
        if (end) window.location.assign(end);
        else toLogin();
      });
    }
    const cp = document.getElementById('btn-change-pwd');
    const dlg = document.getElementById('dlg-password');
    if (cp && dlg) {
      const form = document.getElementById('form-password');
      cp.addEventListener('click', () => { closeMenus(); form.reset(); openDialog(dlg); form.oldPassword.focus(); });
      form.addEventListener('submit', async (e) => {
        e.preventDefault();
        const pw = form.password.value.trim();
        if (!form.oldPassword.value) { formError(form, t('pwd_old') + ': ' + t('common_required')); return; }
        if (pw.length < 4 || pw.length > 20) { formError(form, t('pwd_new') + ': ' + t('pwd_rule')); return; }
        if (pw !== form.password2.value.trim()) { formError(form, t('pwd_mismatch')); return; }
        await busy($('button[type="submit"]', form), async () => {
          try {
            await api('/auth/updatePwd', { oldPassword: form.oldPassword.value, password: pw });
            dlg.close();
            toast(t('pwd_changed'));
            try { await api('/auth/logout'); } catch (err) { /* ignore */ }
            setTimeout(toLogin, 900);
          } catch (err) {
            formError(form, err.message);
          }
        });
      });
    }
    const mt = document.getElementById('menu-toggle');
    if (mt) mt.addEventListener('click', () => document.getElementById('shell').classList.toggle('nav-open'));
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', initChrome);
  else initChrome();

  return {
    boot, t, el, clear, append, $, $$, api, ApiError, toast, openDialog, formError, confirmDialog, confirmDelete, infoDialog, saveForm,
    busy, fmtMs, fmtDate, range, serverTime, closeMenus, badge, msgText, msgBlock, partsOf, pad, toLogin,
  };
})();
