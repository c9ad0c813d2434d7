"""The local dashboard: one self-contained HTML page over the runs API (no build step, no CDN).

It lists the runs of the local store and, for the selected run, draws every numeric series it logged
(loss, reward, proxy_reward / gold_reward, lr, ...) as small SVG charts, with status, cost and notes.
The page reads the same JSON the platform client writes, so what it shows is what was stored.
"""

from __future__ import annotations

__all__ = ["DASHBOARD_HTML"]

DASHBOARD_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>whileai_train runs</title>
<style>
 body{font:14px/1.4 system-ui,sans-serif;margin:0;display:flex;height:100vh;color:#222}
 #list{width:320px;overflow:auto;border-right:1px solid #ddd}
 #list div{padding:8px 12px;border-bottom:1px solid #eee;cursor:pointer}
 #list div:hover,#list div.sel{background:#f2f6ff}
 .st{font-size:12px;padding:1px 6px;border-radius:8px;background:#eee}
 .done{background:#d7f5dd}.failed{background:#fbd5d5}.stopped{background:#ffe9c2}.running{background:#d9e8ff}
 #main{flex:1;overflow:auto;padding:16px 24px}
 .chart{display:inline-block;margin:0 16px 16px 0;vertical-align:top}
 .chart h4{margin:0 0 4px;font-weight:600;font-size:13px}
 pre{background:#f7f7f7;padding:8px;white-space:pre-wrap}
</style></head><body>
<div id="list"></div><div id="main"><h2>whileai_train runs</h2><p>Select a run.</p></div>
<script>
const esc = s => String(s).replace(/[&<>"]/g, c => ({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));
function chart(name, pts){
  const W=300,H=120,P=28; const xs=pts.map(p=>p[0]), ys=pts.map(p=>p[1]);
  const x0=Math.min(...xs), x1=Math.max(...xs), y0=Math.min(...ys), y1=Math.max(...ys);
  const sx=x=>P+(x1>x0?(x-x0)/(x1-x0):0.5)*(W-P-6), sy=y=>H-18-(y1>y0?(y-y0)/(y1-y0):0.5)*(H-26);
  const d=pts.map((p,i)=>(i?'L':'M')+sx(p[0]).toFixed(1)+','+sy(p[1]).toFixed(1)).join('');
  return `<div class="chart"><h4>${esc(name)}</h4><svg width="${W}" height="${H}">
   <path d="${d}" fill="none" stroke="#3060c0" stroke-width="1.5"/>
   ${pts.length<40?pts.map(p=>`<circle cx="${sx(p[0])}" cy="${sy(p[1])}" r="2" fill="#3060c0"/>`).join(''):''}
   <text x="0" y="12" font-size="10">${y1.toPrecision(3)}</text><text x="0" y="${H-18}" font-size="10">${y0.toPrecision(3)}</text>
   <text x="${P}" y="${H-4}" font-size="10">step ${x0}</text><text x="${W-60}" y="${H-4}" font-size="10">step ${x1}</text>
  </svg></div>`;
}
async function show(id){
  document.querySelectorAll('#list div').forEach(d=>d.classList.toggle('sel', d.dataset.id===id));
  const run = await (await fetch('/runs/'+encodeURIComponent(id))).json();
  const pts = (await (await fetch('/runs/'+encodeURIComponent(id)+'/points')).json()).points;
  const series = {};
  for (const p of pts) for (const [k,v] of Object.entries(p)) {
    if (['seq','step','ts'].includes(k) || typeof v !== 'number') continue;
    (series[k] = series[k] || []).push([p.step ?? 0, v]);
  }
  const s = run.summary || {};
  const cost = s.cost_usd != null ? `about $${Number(s.cost_usd).toFixed(2)} (${esc(s.gpu||'')}, ${Math.round(s.seconds||0)} s, estimate)` : esc(s.cost_basis || 'no cost estimate');
  let html = `<h2>${esc(run.name)} <span class="st ${esc(run.status)}">${esc(run.status)}</span></h2>
   <p>${esc(run.id)} &middot; step ${run.step ?? 0}/${run.total_steps ?? '?'} &middot; ${cost}</p>`;
  if (run.error) html += `<pre>${esc(run.error)}</pre>`;
  const order = Object.keys(series).sort((a,b)=>(a==='loss'?-1:b==='loss'?1:a.localeCompare(b)));
  html += order.map(k => chart(k, series[k])).join('') || '<p>No points yet.</p>';
  if (run.notes && run.notes.length) html += '<h3>Notes</h3>' + run.notes.map(n=>`<pre>${esc(n.markdown)}</pre>`).join('');
  document.getElementById('main').innerHTML = html;
}
async function list(){
  const runs = (await (await fetch('/runs')).json()).runs;
  document.getElementById('list').innerHTML = runs.map(r =>
    `<div data-id="${esc(r.id)}"><b>${esc(r.name)}</b> <span class="st ${esc(r.status)}">${esc(r.status)}</span><br>
     <small>${esc(r.id)} &middot; step ${r.step ?? 0}/${r.total_steps ?? '?'}</small></div>`).join('') || '<div>No runs yet.</div>';
  document.querySelectorAll('#list div[data-id]').forEach(d => d.onclick = () => show(d.dataset.id));
  if (runs.length && !document.querySelector('#list div.sel')) show(runs[0].id);
}
list(); setInterval(list, 5000);
</script></body></html>
"""
