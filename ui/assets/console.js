// Live output of one run: polls /joblog/logDetailCat from line 1 and appends each
// chunk until the executor says the run has ended.
'use strict';

(() => {
  const { t, el, clear, api, boot, toast, confirmDialog, badge, msgText } = App;
  const out = document.getElementById('console-output');
  const stateBox = document.getElementById('console-state');
  const statusBox = document.getElementById('console-status');
  const follow = document.getElementById('console-follow');
  const wrap = document.getElementById('console-wrap');
  const killBtn = document.getElementById('console-kill');
  const details = document.getElementById('console-details');
  document.getElementById('console-trigger-msg').textContent = msgText(boot.triggerMsg, 'trigger');
  const resultBox = document.getElementById('console-result');
  function showResult(html) {
    const text = msgText(html, 'result');
    document.getElementById('console-handle-msg').textContent = text;
    resultBox.hidden = !text;
  }
  showResult(boot.handleMsg);

  const POLL_MS = 2000;
  const MAX_FAILURES = 20;
  let run = 0; // generation: a reload stops the previous loop

  function setState(kind, text) {
    stateBox.className = 'console-state state-' + kind;
    clear(stateBox);
    if (kind === 'following') stateBox.appendChild(el('span', { class: 'pulse', 'aria-hidden': 'true' }));
    stateBox.appendChild(document.createTextNode(text));
    stateBox.dataset.state = kind;
  }

  function setStatus(triggerCode, handleCode) {
    clear(statusBox);
    let b;
    if (handleCode === 200) b = badge(t('status_success'), 'success');
    else if (handleCode === 502) b = badge(t('status_timeout'), 'warning');
    else if (handleCode > 0) b = badge(t('status_failed'), 'danger');
    else if (triggerCode === 200) b = badge(t('status_running'), 'running');
    else if (triggerCode > 0) b = badge(t('logs_dispatch_fail'), 'danger');
    else b = badge(t('status_pending'), 'muted');
    statusBox.appendChild(b);
    killBtn.hidden = !(triggerCode === 200 && handleCode === 0);
  }

  // appendChunk renders executor output as text. The admin sends it HTML-escaped with
  // <br>, <b> and </b> kept; those three become a line break and bold text, every
  // other character stays text.
  const ents = { lt: '<', gt: '>', amp: '&', quot: '"', '#39': "'", '#x27': "'", nbsp: '\u00a0' };
  const decode = (s) => s.replace(/&(lt|gt|amp|quot|#39|#x27|nbsp);/g, (m, e) => ents[e]);
  let bold = false;
  function appendChunk(text) {
    if (!text) return;
    const frag = document.createDocumentFragment();
    for (const part of String(text).split(/(<br\s*\/?>|<b>|<\/b>)/i)) {
      if (!part) continue;
      const low = part.toLowerCase();
      if (low.startsWith('<br')) frag.appendChild(document.createTextNode('\n'));
      else if (low === '<b>') bold = true;
      else if (low === '</b>') bold = false;
      else if (bold) frag.appendChild(el('b', {}, decode(part)));
      else frag.appendChild(document.createTextNode(decode(part)));
    }
    out.appendChild(frag);
    if (follow.checked) out.scrollTop = out.scrollHeight;
  }

  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

  // refreshStatus shows the run's current state and returns its row (null when it
  // cannot be read).
  async function refreshStatus() {
    try {
      const page = await api('/joblog/pageList', { jobGroup: 0, jobId: boot.jobId, logStatus: -1, filterTime: '', offset: 0, pagesize: 50 });
      const me = (page.data || []).find((l) => l.id === boot.logId);
      if (me) {
        setStatus(me.triggerCode, me.handleCode);
        showResult(me.handleMsg);
      }
      return me || null;
    } catch (e) {
      return null; // keep the last status
    }
  }

  // An executor that keeps no log (the Node.js SDK's default, logStorage 'memory')
  // refuses every read with this message.
  const NO_LOG = /no local logger found/i;
  const hint = document.getElementById('console-hint');

  // trackWithoutLog says why there is no output and follows the run's state until it
  // ends, so its badge and result change without a reload.
  async function trackWithoutLog(gen, msg) {
    hint.textContent = t('console_no_log_hint', msg);
    hint.hidden = false;
    out.hidden = true; // an empty output box would say nothing
    setState('nolog', t('console_no_log'));
    if (await trackState(gen)) setState('finished', t('console_no_log_done'));
  }

  // trackState follows the run's state until it ends (true) or the page follows
  // again (false): the badge and result change without a reload.
  async function trackState(gen) {
    for (;;) {
      if (gen !== run) return false;
      const me = await refreshStatus();
      if (gen !== run) return false;
      if (me && (me.handleCode > 0 || (me.triggerCode !== 200 && me.triggerCode !== 0))) return true;
      await sleep(POLL_MS);
    }
  }

  async function follow_() {
    const gen = ++run;
    clear(out);
    bold = false;
    hint.hidden = true;
    out.hidden = false;
    setStatus(boot.triggerCode, boot.handleCode);
    if (boot.triggerCode !== 200 && boot.triggerCode !== 0 && boot.handleCode === 0) {
      setState('failed', t('console_no_start'));
      details.open = true;
      return;
    }
    const doneAtOpen = boot.handleCode > 0;
    setState('following', t('console_following'));
    let from = 1;
    let failures = 0;
    for (;;) {
      if (gen !== run) return;
      let chunk;
      try {
        chunk = await api('/joblog/logDetailCat', { logId: boot.logId, fromLineNum: from });
        failures = 0;
      } catch (e) {
        if (NO_LOG.test(e.message)) {
          await trackWithoutLog(gen, e.message);
          return;
        }
        failures++;
        if (failures >= (doneAtOpen ? 3 : MAX_FAILURES)) {
          setState('failed', t('console_too_many') + ' ' + e.message);
          await trackState(gen); // the output is out of reach; the run's state is not
          return;
        }
        setState('retrying', t('console_retrying') + ' ' + e.message);
        await sleep(POLL_MS);
        continue;
      }
      if (gen !== run) return;
      let grew = false;
      if (chunk && chunk.toLineNum >= from) {
        appendChunk(chunk.logContent);
        from = chunk.toLineNum + 1;
        grew = true;
      }
      if (chunk && chunk.end) {
        setState('finished', doneAtOpen ? t('console_loaded') + ' ' + t('console_finished') : t('console_finished'));
        killBtn.hidden = true;
        if (!doneAtOpen) refreshStatus();
        return;
      }
      if (stateBox.dataset.state !== 'following') setState('following', t('console_following'));
      await sleep(grew ? 150 : POLL_MS);
    }
  }

  wrap.addEventListener('change', () => out.classList.toggle('wrap', wrap.checked));
  document.getElementById('console-reload').addEventListener('click', () => { follow_(); });
  killBtn.addEventListener('click', async () => {
    if (!(await confirmDialog(t('logs_kill_ask', boot.logId), { ok: t('logs_kill'), danger: true }))) return;
    try {
      await api('/joblog/logKill', { id: boot.logId });
      toast(t('logs_killed'));
      refreshStatus();
    } catch (e) {
      toast(e.message, 'error');
    }
  });

  follow_();
})();
