// Audit log (administrators): filters (who, action, target, time range) and a paged
// table from /audit/pageList, each entry with its changed fields before and after.
'use strict';

(() => {
  const { listPage, t, el, badge, boot } = App;
  const actions = boot.actions || {};
  const SHOWN = 6; // changed fields shown before "n more"
  const CUT = 160; // characters of a value shown in the table (the title holds all)

  // dt completes a typed time without seconds.
  const dt = (v) => {
    const s = String(v || '').trim().replace('T', ' ');
    if (/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/.test(s)) return s + ':00';
    return s;
  };

  const list = listPage({
    endpoint: '/audit/pageList', table: 'audit-table', reloadOn: ['action', 'targetKind'], row,
    fields: { actor: '', action: '', targetKind: '', targetId: '', from: '', to: '' },
    params: () => ({ from: dt(list.filters.from.value), to: dt(list.filters.to.value) }),
  });

  const OUTCOME = { ok: 'success', failed: 'danger', denied: 'danger' };
  // named is the text of a stored name ("user" under "audit_kind_"), the name itself
  // when no text has it.
  const named = (prefix, k) => {
    if (!k) return '';
    const key = prefix + k;
    const s = t(key);
    return s === key ? k : s;
  };

  // applyFilter narrows the list to one value of a column (a click in the table).
  function applyFilter(values) {
    for (const [k, v] of Object.entries(values)) list.filters[k].value = v;
    list.reload();
  }

  const cut = (v) => (v.length > CUT ? v.slice(0, CUT) + '…' : v);
  const value = (v) => el('code', { class: 'audit-value', title: v.length > CUT ? v : null }, cut(v) === '' ? '""' : cut(v));

  // change renders one changed field: before → after, "set to" on creation, "was" on
  // deletion. Everything is text nodes: values are never interpreted as markup.
  function change(c) {
    const has = (v) => v !== undefined && v !== null;
    const parts = [el('span', { class: 'audit-field' }, String(c.field)), ' '];
    if (has(c.before) && has(c.after)) parts.push(value(String(c.before)), ' → ', value(String(c.after)));
    else if (has(c.after)) parts.push(el('span', { class: 'muted' }, t('audit_created')), ' ', value(String(c.after)));
    else if (has(c.before)) parts.push(el('span', { class: 'muted' }, t('audit_removed')), ' ', value(String(c.before)));
    return el('li', {}, parts);
  }

  // signInSentence says what a sign-in started (its session and remember fields) in
  // words, and returns the other fields (a provider's) to list as they are.
  function signInSentence(list) {
    const field = (name) => list.find((c) => c && c.field === name);
    const session = field('session');
    if (!session || (session.after !== 'token' && session.after !== 'identity')) return { rest: list };
    const remember = field('remember');
    const kept = remember && String(remember.after) === 'true';
    const text = t('audit_signin_sentence', session.after === 'token' ? t('audit_signin_token') : t('audit_signin_identity'),
      kept ? t('audit_signin_kept') : t('audit_signin_not_kept'));
    return { sentence: el('p', { class: 'audit-sentence' }, text), rest: list.filter((c) => c !== session && c !== remember) };
  }

  function changes(list, action) {
    if (action === 'signin' && Array.isArray(list)) {
      const { sentence, rest } = signInSentence(list);
      if (sentence) return rest.length ? el('div', {}, sentence, changes(rest)) : sentence;
    }
    if (typeof list === 'string') return el('span', { class: 'mono' }, cut(list));
    if (!Array.isArray(list) || list.length === 0) return el('span', { class: 'muted' }, t('audit_no_changes'));
    const ul = el('ul', { class: 'audit-changes' }, list.slice(0, SHOWN).map(change));
    if (list.length > SHOWN) {
      const more = el('button', { type: 'button', class: 'link-btn' }, t('audit_more', list.length - SHOWN));
      more.addEventListener('click', () => { list.slice(SHOWN).forEach((c) => ul.appendChild(change(c))); more.remove(); });
      return el('div', {}, ul, more);
    }
    return ul;
  }

  function row(e) {
    const actorBtn = e.actor
      ? el('button', { type: 'button', class: 'link-btn strong', title: t('audit_filter_actor'), onclick: () => applyFilter({ actor: e.actor }) }, e.actor)
      : el('span', { class: 'muted' }, '—');
    const target = e.targetKind
      ? el('button', { type: 'button', class: 'link-btn', title: t('audit_filter_obj'),
        onclick: () => applyFilter({ targetKind: e.targetKind, targetId: e.targetId || '' }) },
      named('audit_target_', e.targetKind) + (e.targetId ? ' #' + e.targetId : ''))
      : el('span', { class: 'muted' }, '—');
    return el('tr', { dataset: { id: e.id, action: e.action, outcome: e.outcome, target: e.targetKind + ':' + e.targetId } },
      el('td', { class: 'mono nowrap' }, e.time),
      el('td', {}, actorBtn, el('div', {}, el('small', { class: 'muted' }, named('audit_kind_', e.actorKind)))),
      el('td', { class: 'mono' }, e.client || '—'),
      el('td', {}, el('div', {}, actions[e.action] || e.action), e.outcome === 'ok' ? null
        : badge(named('audit_outcome_', e.outcome), OUTCOME[e.outcome] || 'muted')),
      el('td', {}, target),
      el('td', { class: 'audit-changes-cell' }, changes(e.changes, e.action)));
  }

  list.load();
})();
