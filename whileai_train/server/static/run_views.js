// The run page's views beside the charts (app.js calls them): the holdout completions table, the smoothing of
// every chart, the points downloads and the config view. Loaded before app.js; it only defines functions, which
// read app.js's state, el, bdi, $ and getJSON when they run.
// Every text from the data (a prompt, a completion, a config value) is put in the page as textContent, never
// as markup: a completion holding <script> shows those characters.
'use strict';

// -- smoothing: TensorBoard's exponential moving average, debiased, over the points in step order ------------
function smoothSeries(ys, weight) {
  if (!(weight > 0)) return ys;
  let last = 0, seen = 0;
  return ys.map(y => {
    if (y == null || !Number.isFinite(y)) return y;
    last = last * weight + (1 - weight) * y;
    seen += 1;
    return last / (1 - Math.pow(weight, seen));  // debiased: the first points are not pulled toward 0
  });
}
function smoothingWeight() {
  const input = document.getElementById('smoothing');
  return input ? Math.min(0.99, Math.max(0, Number(input.value) || 0)) : 0;
}
function redrawSmoothed() {
  $('#smoothing-value').textContent = smoothingWeight().toFixed(2);
  for (const u of state.charts.values()) {
    const holder = u.root.parentNode;
    if (holder && holder._spec) u.setData(chartData(holder._spec), false);
  }
}

// -- downloads ------------------------------------------------------------------------------------------
function setDownloads(runId) {
  const base = '/runs/' + encodeURIComponent(runId) + '/points.';
  $('#download-csv').href = base + 'csv';
  $('#download-json').href = base + 'json';
}

// -- holdout completions ------------------------------------------------------------------------------------
// step: the eval shown ('' every eval); known: a step was chosen (by the person, or the latest at first sight)
const completionView = {run: null, step: '', known: false, rows: [], totals: null, cache: new Map(), loading: ''};
const scoreText = v => typeof v === 'number' ? String(+v.toPrecision(3)) : '—';
const gapOf = r => (typeof r.proxy === 'number' && typeof r.gold === 'number') ? Math.abs(r.proxy - r.gold) : null;

function evalSteps(d) {
  const steps = new Set();
  for (const key of ['proxy_reward', 'gold_reward']) for (const s of (d.series.get(key) || new Map()).keys()) steps.add(s);
  return [...steps].sort((a, b) => a - b);
}
async function loadCompletions(runId, step, running) {
  const key = runId + '|' + step;
  if (completionView.cache.has(key) && !(running && step === '')) return completionView.cache.get(key);
  const q = step === '' ? '' : '?step=' + encodeURIComponent(step);
  const page = await getJSON('/runs/' + encodeURIComponent(runId) + '/completions' + q);
  if (page.completions.length) completionView.cache.set(key, page);  // an eval's rows may land after its points
  return page;
}
function stepOptions(steps, known) {
  const select = $('#completion-step');
  const wanted = ['', ...steps.map(String)];
  if (select.options.length !== wanted.length || [...select.options].some((o, i) => o.value !== wanted[i])) {
    select.replaceChildren(...wanted.map(v => el('option', {value: v, text: v === '' ? 'every eval' : v})));
  }
  if (!known) completionView.step = steps.length ? String(steps[steps.length - 1]) : '';  // the latest eval
  select.value = completionView.step;
}
async function renderCompletions(run, d) {
  if (completionView.run !== run.id) {
    completionView.run = run.id; completionView.step = ''; completionView.rows = []; completionView.known = false;
  }
  const steps = evalSteps(d);
  stepOptions(steps, completionView.known);
  completionView.known = completionView.known || steps.length > 0;
  const want = run.id + '|' + completionView.step;
  if (completionView.loading === want) return;
  completionView.loading = want;
  try {
    const page = await loadCompletions(run.id, completionView.step, run.status === 'running');
    if (completionView.run !== run.id) return;
    completionView.rows = page.completions; completionView.totals = page;
    drawCompletions();
  } catch (e) {
    $('#completion-count').textContent = 'completions not readable: ' + e.message;
  } finally { completionView.loading = ''; }
}
function shownCompletions() {
  const search = ($('#completion-search').value || '').toLowerCase();
  const disagree = $('#completion-disagree').checked;
  const least = Number($('#completion-gap').value) || 0;
  let rows = completionView.rows.filter(r => !search || [r.ask, r.prompt, r.completion,
    ...(r.tools || []).map(t => t.name), ...(r.features || [])].some(t => String(t ?? '').toLowerCase().includes(search)));
  if (disagree) rows = rows.filter(r => gapOf(r) != null && gapOf(r) >= least).sort((a, b) => gapOf(b) - gapOf(a));
  return rows;
}
function toolCell(tools) {
  return el('td', {class: 'tools'}, ...(tools || []).map(t =>
    el('span', {class: 'tool' + (t.failed ? ' failed' : ''), title: t.failed ? 'the call failed' : 'the call returned'},
       bdi(t.name), t.failed ? ' ✗' : ' ✓')));
}
function drawCompletions() {
  const rows = shownCompletions();
  const t = completionView.totals || {};
  const caps = [t.cut ? `${t.cut} cut to ${t.max_chars} characters` : '', t.dropped ? `${t.dropped} not kept past the cap of ${t.max_rows} a run` : '']
    .filter(Boolean).join('; ');
  $('#completion-count').textContent = `${rows.length} of ${completionView.rows.length} shown` +
    ` · ${t.kept ?? 0} kept on the run` + (caps ? ' · ' + caps : '');
  $('#completions tbody').replaceChildren(...(rows.length ? rows.map(r => el('tr', {'data-step': String(r.step)},
    el('td', {class: 'num', text: String(r.step ?? '')}),
    el('td', {class: 'ask'}, bdi(r.ask)),
    el('td', {class: 'text prompt'}, el('div', {dir: 'auto', text: String(r.prompt ?? '')})),
    el('td', {class: 'text completion' + (r.cut ? ' cut' : '')}, el('div', {dir: 'auto', text: String(r.completion ?? '')})),
    el('td', {class: 'num proxy', text: scoreText(r.proxy)}),
    el('td', {class: 'num gold' + (gapOf(r) != null && gapOf(r) >= (Number($('#completion-gap').value) || 0) ? ' apart' : ''),
              text: scoreText(r.gold)}),
    toolCell(r.tools),
    el('td', {class: 'features'}, ...(r.features || []).map(f => el('span', {class: 'feature'}, bdi(f))))))
    : [el('tr', {}, el('td', {colSpan: 8, class: 'empty',
        text: completionView.rows.length ? 'no completion matches the filters' : 'no holdout completions kept for this run'}))]));
}

// a click on the proxy vs gold chart shows the completions of the eval nearest the cursor
function chartClicked(chartId, u) {
  const idx = u.cursor.idx;
  const run = state.selected && runData(state.selected);
  if (chartId !== 'proxy-gold' || idx == null || !run) return;
  const steps = evalSteps(run);
  if (!steps.length) return;
  const x = u.data[0][idx];
  const nearest = steps.reduce((best, s) => Math.abs(s - x) < Math.abs(best - x) ? s : best, steps[0]);
  completionView.step = String(nearest); completionView.known = true;
  renderRun();
  document.getElementById('completion-tools').scrollIntoView({block: 'nearest'});
}

// -- config: the run's context (runs/context.py), read from its summary -------------------------------------
function valueText(v) { return v !== null && typeof v === 'object' ? JSON.stringify(v) : String(v); }
// a block's keys in sorted order, flowing into as many columns as the page is wide (a trainer has ~150 arguments)
function keyValueGrid(obj, id) {
  const keys = Object.keys(obj).sort();
  return el('div', {class: 'kv', 'data-block': id}, ...keys.map(k =>
    el('div', {class: 'kv-row', 'data-key': k}, el('span', {class: 'k'}, bdi(k)),
       el('span', {class: 'v', dir: 'auto', text: valueText(obj[k])}))));
}
function renderConfig(run) {
  const s = run.summary || {};
  const c = (s.context && typeof s.context === 'object') ? s.context : {};
  const parts = [];
  const tags = Array.isArray(c.tags) ? c.tags : (typeof s.tags === 'string' && s.tags ? s.tags.split(', ') : []);
  const line = [['project', c.project ?? s.project], ['group', c.group ?? s.group]].filter(([, v]) => v);
  if (line.length || tags.length) {
    parts.push(el('p', {class: 'context-line'}, ...line.flatMap(([k, v]) => [el('b', {text: k + ' '}), bdi(v), '   ']),
      ...(tags.length ? [el('b', {text: 'tags '}), ...tags.map(t => el('span', {class: 'tag'}, bdi(t)))] : [])));
  }
  const blocks = [['versions', 'versions'], ['args', 'trainer arguments'], ['model_config', 'model config'],
                  ['peft_config', 'PEFT config']];
  for (const [key, title] of blocks) {
    const v = c[key];
    if (!v || typeof v !== 'object') continue;
    const n = Object.keys(v).length;
    parts.push(el('details', {class: 'config-block', 'data-block': key, open: key === 'versions' || key === 'args'},
      el('summary', {text: `${title} (${n})`}), keyValueGrid(v, key)));
  }
  $('#config').replaceChildren(...(parts.length ? parts : [el('p', {class: 'empty', text: 'no config kept on this run'})]));
}

// -- wiring (app.js calls setupRunViews once, and renderRunViews on each render of the selected run) -------------
let configShown = '';
function renderRunViews(run, d) {
  setDownloads(run.id);
  const sig = run.id + JSON.stringify((run.summary || {}).context || null);
  if (sig !== configShown) { configShown = sig; renderConfig(run); }
  renderCompletions(run, d);
}
function setupRunViews(rerender) {
  $('#smoothing').addEventListener('input', redrawSmoothed);
  $('#completion-step').addEventListener('change', e => {
    completionView.step = e.target.value; completionView.known = true; rerender();
  });
  for (const id of ['#completion-search', '#completion-gap']) $(id).addEventListener('input', drawCompletions);
  $('#completion-disagree').addEventListener('change', drawCompletions);
}
