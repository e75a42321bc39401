// GLUE editor: the bundled code editor (a textarea with line numbers without it), the version list (current + up to 30
// saved) and saving a new version with a remark (administrators only).
'use strict';

(() => {
  const { t, boot, api, toast, openDialog, formError, confirmDialog, busy } = App;
  const ta = document.getElementById('glue-source');
  const gutter = document.getElementById('gutter');
  const lines = document.getElementById('glue-lines');
  const sel = document.getElementById('glue-version');
  const dirtyFlag = document.getElementById('glue-dirty');
  const versions = boot.versions || [];
  let base = versions.length ? versions[0].source || '' : '';
  let lastCount = 0;

  function renumber() {
    const n = ta.value.split('\n').length;
    if (n !== lastCount) {
      const out = new Array(n);
      for (let i = 0; i < n; i++) out[i] = String(i + 1);
      gutter.textContent = out.join('\n');
      lastCount = n;
    }
    lines.textContent = t('glue_lines', n);
    gutter.scrollTop = ta.scrollTop;
    dirtyFlag.hidden = ta.value === base;
  }

  ta.value = base;
  renumber();
  ta.addEventListener('input', renumber);
  ta.addEventListener('scroll', () => { gutter.scrollTop = ta.scrollTop; });

  // With the bundled editor (editor.js) the script is edited with its language's
  // colours; the text area stays, hidden, as the value the page saves.
  let cm = null;
  if (window.GlueEditor) {
    const box = document.getElementById('editor');
    const host = document.createElement('div');
    host.className = 'cm-host';
    host.id = 'glue-cm';
    box.appendChild(host);
    box.classList.add('has-cm');
    cm = window.GlueEditor.create(host, {
      doc: ta.value, glueType: boot.glueType, readOnly: ta.readOnly, label: ta.getAttribute('aria-label'), nonce: boot.styleNonce,
      onChange: (doc) => { ta.value = doc; renumber(); },
      onSave: () => openSave(),
    });
  }
  // setSource shows a version's source in whichever editor the page has.
  function setSource(src) {
    ta.value = src;
    ta.scrollTop = 0;
    if (cm) cm.value = src;
    renumber();
  }

  ta.addEventListener('keydown', (e) => {
    if (ta.readOnly) return;
    if (e.key === 'Tab' && !e.ctrlKey && !e.altKey && !e.metaKey) {
      e.preventDefault();
      if (!document.execCommand('insertText', false, '    ')) ta.setRangeText('    ', ta.selectionStart, ta.selectionEnd, 'end');
      renumber();
    }
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 's') {
      e.preventDefault();
      openSave();
    }
  });

  sel.addEventListener('change', async () => {
    const v = versions[+sel.value];
    if (!v) return;
    if (ta.value !== base && !(await confirmDialog(t('glue_unsaved') + ' — ' + t('glue_loaded')))) {
      sel.value = String(versions.findIndex((x) => x.source === base) >= 0 ? versions.findIndex((x) => x.source === base) : 0);
      return;
    }
    setSource(v.source || '');
    dirtyFlag.hidden = ta.value === base;
    if (+sel.value !== 0) toast(t('glue_loaded'));
  });

  const saveBtn = document.getElementById('glue-save');
  const dlg = document.getElementById('dlg-glue-save');
  const form = document.getElementById('form-glue-save');

  function openSave() {
    if (!saveBtn) return;
    form.reset();
    openDialog(dlg);
    form.glueRemark.focus();
  }

  if (saveBtn) {
    saveBtn.addEventListener('click', openSave);
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const remark = form.glueRemark.value.trim();
      if (remark.length < 4 || remark.length > 100) {
        formError(form, t('glue_remark') + ': ' + t('glue_remark_rule'));
        return;
      }
      await busy(form.querySelector('button[type="submit"]'), async () => {
        try {
          await api('/jobcode/save', { id: boot.jobId, glueSource: ta.value, glueRemark: remark });
          base = ta.value;
          dirtyFlag.hidden = true;
          dlg.close();
          toast(t('common_saved'));
          setTimeout(() => window.location.reload(), 600);
        } catch (err) {
          formError(form, err.message);
        }
      });
    });
  }

  window.addEventListener('beforeunload', (e) => {
    if (!ta.readOnly && ta.value !== base) {
      e.preventDefault();
      e.returnValue = '';
    }
  });
})();
