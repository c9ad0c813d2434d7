// The run page: the runs table and the selected run(s), read from the runs API every second.
// Every name, note, reason and error is put in the page as text (textContent inside <bdi>), never as markup;
// a note's markdown becomes elements whose text is textContent (markdown() below).
// Anything keyed by a name from the data (runs, metrics, families, charts) lives in a Map, so a metric named
// constructor, __proto__ or toString is a metric like any other.
'use strict';

const REFRESH_MS = 1000;
const PALETTE = ['#3465c8', '#d0662a', '#2a9a4a', '#9a3ac0', '#c0304a', '#2a9aa8', '#7a6a20', '#555'];
const MONITOR = ['proxy_reward', 'gold_reward'];
const SIDE = ['holdout_length', 'kl'];
const TRAINING = ['loss', 'learning_rate', 'lr'];
const SKIP = new Set(['seq', 'step', 'ts', 'cost_usd', 'epoch', ...MONITOR, ...SIDE, ...TRAINING]);
// A run with thousands of metric names shows the first MAX_METRIC_CHARTS (by name) and a filter for the rest.
const MAX_METRIC_CHARTS = 48;

const state = {
  runs: [], sort: {key: 'created', dir: -1}, filter: '', status: '', metricFilter: '',
  selected: null, overlay: [], data: new Map(), charts: new Map(), zoom: new Map(), shownKey: '',
};

const $ = sel => document.querySelector(sel);
function el(tag, attrs, ...kids) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') node.className = v; else if (k === 'text') node.textContent = v;
    else if (k.startsWith('data-')) node.setAttribute(k, v); else node[k] = v;
  }
  for (const kid of kids) if (kid != null) node.append(kid);
  return node;
}
const bdi = text => el('bdi', {text: String(text ?? ''), dir: 'auto'});
async function getJSON(url) {
  const r = await fetch(url, {credentials: 'same-origin'});
  if (!r.ok) throw new Error(url + ': HTTP ' + r.status);
  return r.json();
}

// -- notes: a small markdown (headings, paragraphs, lists, fenced code, `code`, **bold**, *italic*) built as
// DOM nodes whose every piece of text is textContent: no HTML in a note ever becomes markup.
function inline(text) {
  const out = [];
  const pattern = /`([^`\n]+)`|\*\*([^*\n]+)\*\*|(?<![\w*])\*([^*\n]+)\*(?![\w*])|(?<!\w)_([^_\n]+)_(?!\w)/g;
  let last = 0;
  for (const m of text.matchAll(pattern)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    if (m[1] != null) out.push(el('code', {text: m[1]}));
    else if (m[2] != null) out.push(el('strong', {text: m[2]}));
    else out.push(el('em', {text: m[3] ?? m[4]}));
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}
function markdown(source) {
  const blocks = [], lines = String(source ?? '').split(/\r?\n/);
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = line.match(/^\s*(```|~~~)/);
    if (fence) {  // fenced code: verbatim to the closing fence (or the end)
      const body = [];
      for (i++; i < lines.length && !lines[i].trimStart().startsWith(fence[1]); i++) body.push(lines[i]);
      i++;
      blocks.push(el('pre', {}, el('code', {text: body.join('\n')})));
      continue;
    }
    const heading = line.match(/^(#{1,6})\s+(.*)$/);
    if (heading) {
      blocks.push(el('h' + Math.min(6, heading[1].length + 3), {}, ...inline(heading[2])));
      i++;
      continue;
    }
    if (/^\s*[-*+]\s+/.test(line)) {
      const items = [];
      for (; i < lines.length && /^\s*[-*+]\s+/.test(lines[i]); i++)
        items.push(el('li', {}, ...inline(lines[i].replace(/^\s*[-*+]\s+/, ''))));
      blocks.push(el('ul', {}, ...items));
      continue;
    }
    if (!line.trim()) { i++; continue; }
    const para = [];
    for (; i < lines.length && lines[i].trim() && !/^(#{1,6}\s|\s*(```|~~~)|\s*[-*+]\s+)/.test(lines[i]); i++)
      para.push(lines[i]);
    blocks.push(el('p', {}, ...inline(para.join('\n'))));
  }
  return blocks;
}

// -- formatting ---------------------------------------------------------------------------------------
function duration(run) {
  const end = run.finished ?? (run.status === 'running' ? Date.now() / 1000 : run.created);
  const s = Math.max(0, Math.round(end - run.created));
  if (s < 60) return s + ' s';
  if (s < 3600) return Math.floor(s / 60) + ' min ' + (s % 60) + ' s';
  return Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' min';
}
const durationSeconds = run => (run.finished ?? Date.now() / 1000) - run.created;
function costOf(run, lastPoint) {
  const s = run.summary || {};
  let usd = typeof s.cost_usd === 'number' ? s.cost_usd : null;
  if (usd == null && lastPoint && typeof lastPoint.cost_usd === 'number') usd = lastPoint.cost_usd;
  return {usd, basis: s.cost_basis || null};
}
const costText = c => c.usd != null ? 'about $' + c.usd.toFixed(2) : (c.basis ? 'no cost estimate' : '—');
const num = v => typeof v === 'number' ? (Math.abs(v) >= 1e4 || (v !== 0 && Math.abs(v) < 1e-3) ? v.toExponential(3) : +v.toPrecision(4)) : '—';
const axisNum = v => v == null ? '' : (v !== 0 && (Math.abs(v) < 1e-2 || Math.abs(v) >= 1e5) ? v.toExponential(1) : String(+v.toPrecision(3)));
const firstLine = t => String(t || '').split('\n').find(x => x.trim()) || '';
function reasonOf(run) {
  if (run.status === 'stopped') return run.stop_reason || 'stopped (no reason given)';
  if (run.status === 'failed') return run.error || 'failed (no error given)';
  return '';
}

// -- URL: the selection lives in the hash, so a refresh keeps it -----------------------------------------
function readHash() {
  const params = new URLSearchParams(location.hash.slice(1));
  state.selected = params.get('run');
  state.overlay = (params.get('with') || '').split(',').filter(Boolean);
}
function writeHash() {
  const params = new URLSearchParams();
  if (state.selected) params.set('run', state.selected);
  if (state.overlay.length) params.set('with', state.overlay.join(','));
  history.replaceState(null, '', '#' + params.toString());
}

// -- runs table ---------------------------------------------------------------------------------------
const SORTERS = {
  name: r => r.name.toLowerCase(), status: r => r.status, step: r => (r.step || 0) / (r.total_steps || 1),
  duration: durationSeconds, cost: r => costOf(r).usd ?? -1, alarms: r => r.alarm_count || 0,
  loss: r => r.last_loss ?? Infinity, created: r => r.created,
};
function shownRuns() {
  const f = state.filter.toLowerCase();
  const rows = state.runs.filter(r => (!f || r.name.toLowerCase().includes(f)) && (!state.status || r.status === state.status));
  const key = SORTERS[state.sort.key];
  return rows.sort((a, b) => { const x = key(a), y = key(b); return (x < y ? -1 : x > y ? 1 : 0) * state.sort.dir; });
}
function renderTable() {
  const body = $('#runs tbody');
  const rows = shownRuns().map(run => {
    const pct = run.total_steps ? Math.min(100, 100 * (run.step || 0) / run.total_steps) : 0;
    const cost = costOf(run);
    const box = el('input', {type: 'checkbox', class: 'overlay', title: 'overlay on the charts',
                             checked: state.overlay.includes(run.id)});
    box.addEventListener('click', e => { e.stopPropagation(); toggleOverlay(run.id, box.checked); });
    const reason = reasonOf(run);
    const tr = el('tr', {'data-id': run.id, class: run.id === state.selected ? 'sel' : ''},
      el('td', {}, box),
      el('td', {class: 'name', title: run.name}, bdi(run.name)),
      el('td', {class: 'status'}, el('span', {class: 'badge ' + run.status, text: run.status}),
         reason ? el('span', {class: 'reason', title: reason}, bdi(firstLine(reason))) : null),
      el('td', {class: 'progress'}, el('span', {class: 'bar'}, el('div', {style: `width:${pct}%`})),
         el('span', {text: `${run.step ?? 0}/${run.total_steps ?? '?'}`})),
      el('td', {class: 'duration', text: duration(run)}),
      el('td', {class: 'cost', text: costText(cost), title: cost.basis || ''}),
      el('td', {class: 'alarms' + (run.alarm_count ? ' has' : ''), text: String(run.alarm_count || 0)}),
      el('td', {class: 'loss', text: String(num(run.last_loss))}),
      el('td', {class: 'created', text: new Date(run.created * 1000).toLocaleString()}));
    tr.addEventListener('click', () => select(run.id));
    return tr;
  });
  body.replaceChildren(...rows);
  $('#no-runs').hidden = state.runs.length > 0;
  document.querySelectorAll('#runs th[data-sort]').forEach(th => {
    th.classList.toggle('asc', th.dataset.sort === state.sort.key && state.sort.dir > 0);
    th.classList.toggle('desc', th.dataset.sort === state.sort.key && state.sort.dir < 0);
  });
}
function select(id) {
  state.selected = id;
  writeHash(); renderTable(); showRuns();
}
function toggleOverlay(id, on) {
  state.overlay = state.overlay.filter(x => x !== id);
  if (on && id !== state.selected) state.overlay.push(id);
  writeHash(); renderTable(); showRuns();
}

// -- run data: points read once, then only the new ones -------------------------------------------------
function runData(id) {
  if (!state.data.has(id)) state.data.set(id, {record: null, series: new Map(), lastSeq: null, count: 0, last: null});
  return state.data.get(id);
}
function addPoints(d, points) {
  for (const p of points) {
    d.count += 1;
    if (typeof p.seq === 'number' && (d.lastSeq == null || p.seq > d.lastSeq)) { d.lastSeq = p.seq; d.last = p; }
    if (typeof p.step !== 'number') continue;
    for (const [k, v] of Object.entries(p)) {
      if (k === 'seq' || k === 'step' || k === 'ts' || (typeof v !== 'number' && v !== null)) continue;
      let series = d.series.get(k);
      if (!series) d.series.set(k, series = new Map());
      series.set(p.step, v);
    }
  }
}
async function loadPoints(id, full) {
  const d = runData(id);
  if (full) { d.series = new Map(); d.lastSeq = null; d.count = 0; }
  let changed = false;
  for (;;) {
    const q = d.lastSeq == null ? '' : '?after_seq=' + d.lastSeq;
    const page = await getJSON('/runs/' + encodeURIComponent(id) + '/points' + q);
    if (page.points.length) { addPoints(d, page.points); changed = true; }
    if (page.next_after_seq == null) {
      if (!full && d.count !== page.points_count) return loadPoints(id, true);  // a late re-send landed
      return changed;
    }
  }
}
async function refreshRun(id) {
  const d = runData(id);
  const before = d.record ? JSON.stringify([d.record.status, d.record.step, d.record.notes.length,
                                            d.record.alarms.length, d.record.summary]) : '';
  d.record = await getJSON('/runs/' + encodeURIComponent(id));
  const after = JSON.stringify([d.record.status, d.record.step, d.record.notes.length, d.record.alarms.length,
                                d.record.summary]);
  const fresh = d.lastSeq == null;
  const changed = (fresh || d.record.status === 'running' || before !== after) ? await loadPoints(id, fresh) : false;
  return changed || before !== after;
}

// -- charts -------------------------------------------------------------------------------------------
const seriesOf = (id, key) => runData(id).series.get(key) || new Map();
function chartData(spec) {
  const steps = new Set();
  for (const s of spec.series) for (const x of seriesOf(s.run, s.key).keys()) steps.add(x);
  const xs = [...steps].sort((a, b) => a - b);
  const ys = spec.series.map(s => { const m = seriesOf(s.run, s.key); return xs.map(x => m.has(x) ? m.get(x) : null); });
  const weight = smoothingWeight();  // the smoothing control (run_views.js), on every chart
  return [xs, ...ys.map(y => smoothSeries(y, weight))];
}
function dropChart(id) {
  const u = state.charts.get(id);
  if (u) { u.destroy(); state.charts.delete(id); }
  state.zoom.delete(id);
}
function makeChart(holder, spec) {
  const old = state.charts.get(spec.id);
  const keepZoom = state.zoom.get(spec.id) && old ? {min: old.scales.x.min, max: old.scales.x.max} : null;
  if (old) old.destroy();
  holder.replaceChildren();
  const width = spec.width || 420;
  const opts = {
    width, height: 220, title: spec.title,
    scales: {x: {time: false}},
    cursor: {sync: {key: 'steps'}},
    legend: {live: true},
    series: [{label: 'step'}, ...spec.series.map(s => ({label: s.label, stroke: s.color, width: 1.6,
                                                         dash: s.dash, spanGaps: true, points: {size: 4}}))],
    axes: [{label: 'step'}, {size: 64, values: (u, vals) => vals.map(axisNum)}],
    hooks: {
      setSelect: [u => { if (u.select.width > 0) state.zoom.set(spec.id, true); }],
      draw: [u => placeMarkers(u, spec)],
    },
  };
  const u = new uPlot(opts, chartData(spec), holder);
  u.over.addEventListener('dblclick', () => { state.zoom.set(spec.id, false); });
  u.over.addEventListener('click', () => chartClicked(spec.id, u));  // proxy vs gold: that eval's completions
  holder._uplot = u;
  state.charts.set(spec.id, u);
  if (keepZoom) u.setScale('x', keepZoom);
  return u;
}
function updateChart(spec, holder) {
  const u = state.charts.get(spec.id);
  const sig = JSON.stringify(spec.series.map(s => [s.run, s.key]));
  if (!u || holder._sig !== sig || !holder.contains(u.root)) {
    holder._sig = sig; makeChart(holder, spec); return;
  }
  holder._spec = spec;
  u.setData(chartData(spec), !state.zoom.get(spec.id));  // zoomed: keep the scales the person chose
}
function placeMarkers(u, spec) {
  const alarms = (holderSpec(u, spec).alarms) || [];
  const over = u.over;
  over.querySelectorAll('.alarm-marker').forEach(m => m.remove());
  for (const a of alarms) {
    if (a.step == null) continue;
    const left = u.valToPos(a.step, 'x');
    if (!(left >= 0 && left <= over.clientWidth)) continue;
    const text = `${a.name} alarm at step ${a.step}: ${a.message}`;
    const mark = el('div', {class: 'alarm-marker', 'data-step': String(a.step), 'data-name': a.name});
    mark.style.left = left + 'px';
    const pin = el('span', {title: text});
    pin.setAttribute('aria-label', text);
    pin.addEventListener('mouseenter', e => tip(text, e));
    pin.addEventListener('mouseleave', () => tip(null));
    mark.append(pin);
    over.append(mark);
  }
}
function holderSpec(u, spec) { return (u.root.parentNode && u.root.parentNode._spec) || spec; }
function tip(text, e) {
  const t = $('#tip');
  if (!text) { t.hidden = true; return; }
  t.textContent = text; t.hidden = false;
  t.style.left = (e.clientX + 12) + 'px'; t.style.top = (e.clientY + 12) + 'px';
}
function chartSlot(parent, id) {
  let holder = parent.querySelector(`.chart[data-chart="${CSS.escape(id)}"]`);
  if (!holder) { holder = el('div', {class: 'chart', 'data-chart': id}); parent.append(holder); }
  return holder;
}

// -- the run view -------------------------------------------------------------------------------------
function shownIds() { return state.selected ? [state.selected, ...state.overlay.filter(x => x !== state.selected)] : []; }
function seriesFor(ids, keys, styles) {
  const out = [];
  ids.forEach((id, i) => keys.forEach((key, j) => {
    if (!runData(id).series.has(key)) return;
    const name = runData(id).record?.name ?? id;
    const style = styles ? styles(i, j) : {color: PALETTE[(i * keys.length + j) % PALETTE.length]};
    out.push({run: id, key, label: ids.length > 1 ? `${key} · ${name}` : key, ...style});
  }));
  return out;
}
function familyOf(key) {
  if (key.startsWith('alarm/')) return null;
  if (key.startsWith('eval_')) return 'eval_*';
  const parts = key.split('/');
  if (parts[0] === 'system') return 'system';  // GPU memory and utilisation (callbacks/gpu_metrics.py)
  if (parts[0] === 'rewards' && parts.length > 2) return 'rewards/' + parts[1] + '/*';
  return parts.length > 1 ? parts[0] + '/*' : 'other';
}
function renderStatus(run, d) {
  const line = $('#status-line');
  const cost = costOf(run, d.last);
  const items = [
    el('span', {class: 'badge ' + run.status, id: 'run-status', text: run.status}),
    el('span', {id: 'last-step', text: `step ${run.step ?? 0} of ${run.total_steps ?? '?'}`}),
    el('span', {id: 'duration', text: duration(run)}),
    el('span', {id: 'cost', text: cost.usd != null ? costText(cost) + (cost.basis ? ` (${cost.basis})` : '') : (cost.basis || 'no cost estimate')}),
    el('span', {id: 'points-count', text: `${run.points_count} points`}),
    el('span', {id: 'alarm-count', text: `${run.alarms.length} alarm${run.alarms.length === 1 ? '' : 's'}`}),
  ];
  if (run.status === 'stopped') items.push(el('div', {class: 'reason', id: 'stop-reason'}, 'stop reason: ', bdi(reasonOf(run))));
  if (run.error) items.push(el('div', {class: 'error', id: 'run-error'}, 'error: ', bdi(run.error)));
  line.replaceChildren(...items);
}
function renderRun() {
  const ids = shownIds();
  const main = $('#run');
  if (!ids.length || !runData(ids[0]).record) { main.hidden = true; return; }
  main.hidden = false;
  const d = runData(ids[0]);
  const run = d.record;
  $('#run-title').textContent = run.name;
  $('#overlay-note').textContent = ids.length > 1 ? `with ${ids.length - 1} more run${ids.length > 2 ? 's' : ''} overlaid` : '';
  renderStatus(run, d);
  renderRunViews(run, d);  // downloads, config, holdout completions (run_views.js)
  const key = ids.join(',');
  if (state.shownKey !== key) {  // another selection: charts start fresh
    for (const u of state.charts.values()) u.destroy();
    state.charts = new Map(); state.zoom = new Map(); state.shownKey = key;
    ['#training-charts', '#monitor-charts', '#family-groups'].forEach(s => $(s).replaceChildren());
  }
  const lrKey = runData(ids[0]).series.has('learning_rate') ? 'learning_rate' : 'lr';
  const specs = [
    ['#training-charts', {id: 'loss', title: 'loss', series: seriesFor(ids, ['loss'])}],
    ['#training-charts', {id: 'lr', title: 'learning rate', series: seriesFor(ids, [lrKey])}],
    ['#monitor-charts', {id: 'proxy-gold', title: 'proxy vs gold reward', width: 560, alarms: run.alarms,
      series: seriesFor(ids, MONITOR, (i, j) => ({color: ids.length > 1 ? PALETTE[i % PALETTE.length] : ['#d0662a', '#2a9a4a'][j],
                                                  dash: j === 1 ? [6, 4] : undefined}))}],
    ['#monitor-charts', {id: 'holdout_length', title: 'holdout length', width: 330, series: seriesFor(ids, ['holdout_length'])}],
    ['#monitor-charts', {id: 'kl', title: 'KL', width: 330, series: seriesFor(ids, ['kl'])}],
  ];
  for (const [where, spec] of specs) {
    const holder = chartSlot($(where), spec.id);
    holder._spec = spec;
    if (spec.series.length || spec.alarms?.length) updateChart(spec, holder);
    else if (!holder.querySelector('.empty')) holder.replaceChildren(el('div', {class: 'empty', text: `${spec.title}: not logged`}));
  }
  $('#alarm-list').replaceChildren(...(run.alarms.length ? run.alarms.map(a =>
    el('li', {'data-step': String(a.step), 'data-name': a.name}, el('span', {class: 'step', text: `step ${a.step}`}),
       ' · ', el('b', {text: a.name}), ': ', bdi(a.message))) : [el('li', {text: 'no alarms'})]));
  renderFamilies(ids, d);
  $('#notes').replaceChildren(...(run.notes.length ? run.notes.map(n => el('div', {class: 'note', dir: 'auto'},
                                                                            ...markdown(n.markdown)))
                                                 : [el('p', {text: 'no notes'})]));
  const s = run.summary || {};
  const block = ['holdout', 'delta'].filter(k => s[k] != null);
  $('#holdout-panel').hidden = !block.length;
  $('#holdout').replaceChildren(...block.map(k => el('div', {'data-block': k}, el('h4', {text: k}),
                                                      ...(k === 'holdout' ? holdoutLine(s[k]) : deltaTable(s[k])),
                                                      el('details', {class: 'raw'}, el('summary', {text: 'the record'}),
                                                         el('pre', {text: JSON.stringify(s[k], null, 2)})))));
}
// the TRL metrics by family: the first MAX_METRIC_CHARTS names that match the filter, each family a <details>
function renderFamilies(ids, d) {
  const all = [...d.series.keys()].filter(k => !SKIP.has(k) && familyOf(k) != null).sort();
  const filter = state.metricFilter.trim().toLowerCase();
  const matching = filter ? all.filter(k => k.toLowerCase().includes(filter)) : all;
  const shown = matching.slice(0, MAX_METRIC_CHARTS);
  const families = new Map(), totals = new Map();
  for (const k of all) totals.set(familyOf(k), (totals.get(familyOf(k)) || 0) + 1);
  for (const k of shown) {
    const f = familyOf(k);
    if (!families.has(f)) families.set(f, []);
    families.get(f).push(k);
  }
  $('#metric-tools').hidden = all.length <= MAX_METRIC_CHARTS && !filter;
  $('#metric-count').textContent = shown.length < matching.length
    ? `the first ${shown.length} of ${matching.length} metrics${filter ? ' matching' : ''}; type to find the others`
    : `${matching.length} of ${all.length} metrics`;
  const groups = $('#family-groups');
  for (const box of groups.querySelectorAll('details.family')) {  // families no longer shown go, with their charts
    if (!families.has(box.dataset.family)) {
      box.querySelectorAll('.chart').forEach(c => dropChart(c.dataset.chart));
      box.remove();
    }
  }
  const none = groups.querySelector('.empty');
  if (families.size && none) none.remove();
  if (!families.size && !none) groups.replaceChildren(el('p', {class: 'empty', text: filter ? 'no metric matches the filter' : 'no other metrics logged'}));
  for (const [family, keys] of families) {
    let box = groups.querySelector(`details[data-family="${CSS.escape(family)}"]`);
    if (!box) {
      box = el('details', {class: 'family', 'data-family': family, open: true}, el('summary'), el('div', {class: 'row'}));
      groups.append(box);
    }
    const total = totals.get(family);
    box.querySelector('summary').textContent = keys.length < total ? `${family} (${keys.length} of ${total})` : `${family} (${total})`;
    const row = box.querySelector('.row'), wanted = new Set(keys.map(k => 'm:' + k));
    for (const holder of row.querySelectorAll('.chart')) {
      if (!wanted.has(holder.dataset.chart)) { dropChart(holder.dataset.chart); holder.remove(); }
    }
    for (const k of keys) {
      // the holdout's twin of a training metric (tools/holdout_call_frequency beside tools/call_frequency)
      // is drawn on the training metric's chart
      if (k.includes('/holdout_') && d.series.has(k.replace('/holdout_', '/'))) continue;
      const twin = k.replace('/', '/holdout_');
      const drawn = twin !== k && d.series.has(twin) ? [k, twin] : [k];
      const spec = {id: 'm:' + k, title: drawn.join(' vs '), width: 340, series: seriesFor(ids, drawn)};
      const holder = chartSlot(row, spec.id);
      holder._spec = spec;
      if (box.open) updateChart(spec, holder);
    }
  }
}
// summary["holdout"] read as a sentence: the verdict, each side with its interval and size, the delta
const interval = v => Array.isArray(v) && v.length === 2 && v.every(x => typeof x === 'number')
  ? ` [${num(v[0])}, ${num(v[1])}]` : '';
const signed = v => (v >= 0 ? '+' : '') + num(v);
function holdoutLine(h) {
  if (!h || typeof h !== 'object') return [];
  const metric = typeof h.metric === 'string' ? h.metric : 'pass_rate';
  const value = side => (side && typeof side === 'object') ? side[metric] : side;
  const size = side => (side && typeof side === 'object' && side.n_tasks != null)
    ? ` (${side.n_tasks} tasks${side.k != null ? ', k=' + side.k : ''})` : '';
  const before = value(h.before), after = value(h.after);
  if (typeof before !== 'number' || typeof after !== 'number') return [];
  const delta = typeof h.delta === 'number' ? h.delta : after - before;
  const verdict = [h.headline_verdict, h.verdict].filter(x => typeof x === 'string' && x).join(': ');
  const line = `${metric} ${num(before)}${interval(h.before && h.before.ci95)}${size(h.before)} -> ` +
    `${num(after)}${interval(h.after && h.after.ci95)}${size(h.after)}, delta ${signed(delta)}${interval(h.ci95)}`;
  return [el('p', {class: 'verdict-line', text: (verdict ? verdict + ' — ' : '') + line})];
}
// summary["delta"] (a delta report) as a table: one row per metric, the target and the guards marked
function deltaTable(d) {
  if (!d || typeof d !== 'object' || !d.metrics || typeof d.metrics !== 'object') return [];
  const guards = new Set(Array.isArray(d.must_not_regress) ? d.must_not_regress : []);
  const rows = Object.values(d.metrics).filter(m => m && typeof m === 'object').map(m => el('tr', {},
    el('td', {}, bdi(m.name)), el('td', {text: num(m.before)}), el('td', {text: num(m.after)}),
    el('td', {text: typeof m.delta === 'number' ? signed(m.delta) + interval(m.ci95) : '—'}),
    el('td', {text: String(m.verdict || '')}),
    el('td', {text: m.name === d.target ? 'target' : guards.has(m.name) ? 'must not regress' : ''})));
  const head = el('tr', {}, ...['metric', 'before', 'after', 'delta [95% CI]', 'verdict', ''].map(t => el('th', {text: t})));
  const title = typeof d.headline_verdict === 'string' ? [el('p', {class: 'verdict-line', text: d.headline_verdict})] : [];
  const warnings = (Array.isArray(d.warnings) ? d.warnings : []).map(w => el('li', {dir: 'auto', text: String(w)}));
  return [...title, el('table', {class: 'delta-table'}, el('thead', {}, head), el('tbody', {}, ...rows)),
          ...(warnings.length ? [el('ul', {class: 'delta-warnings'}, ...warnings)] : [])];
}
async function showRuns() {
  const ids = shownIds();
  await Promise.all(ids.map(id => refreshRun(id).catch(() => false)));
  renderRun();
}

// -- the loop -----------------------------------------------------------------------------------------
let busy = false;
async function tick() {
  if (busy) return;
  busy = true;
  try {
    state.runs = (await getJSON('/runs?limit=1000')).runs;
    if (!state.selected && state.runs.length) { state.selected = state.runs[0].id; writeHash(); }
    renderTable();
    const changed = await Promise.all(shownIds().map(id => refreshRun(id).catch(() => false)));
    if (changed.some(Boolean) || $('#run').hidden) renderRun();
    else renderStatus(runData(shownIds()[0]).record, runData(shownIds()[0]));
    $('#live').className = ''; $('#live').textContent = 'live · ' + new Date().toLocaleTimeString();
  } catch (e) {
    $('#live').className = 'stale'; $('#live').textContent = 'not reachable: ' + e.message;
  } finally { busy = false; }
}
document.querySelectorAll('#runs th[data-sort]').forEach(th => th.addEventListener('click', () => {
  const key = th.dataset.sort;
  state.sort = {key, dir: state.sort.key === key ? -state.sort.dir : (key === 'name' ? 1 : -1)};
  renderTable();
}));
$('#filter').addEventListener('input', e => { state.filter = e.target.value; renderTable(); });
$('#status-filter').addEventListener('change', e => { state.status = e.target.value; renderTable(); });
$('#metric-filter').addEventListener('input', e => { state.metricFilter = e.target.value; renderRun(); });
document.addEventListener('toggle', e => { if (e.target.matches && e.target.matches('details.family')) renderRun(); }, true);
window.addEventListener('hashchange', () => { readHash(); renderTable(); showRuns(); });
setupRunViews(renderRun);
readHash();
tick();
setInterval(tick, REFRESH_MS);
