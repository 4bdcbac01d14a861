// Horizontal grouped bar charts drawn as SVG markup (strings: one innerHTML per chart is the
// quickest way to put ~1,000 bars on the page). One <title> per case (its row), not per bar: the
// tooltip lists every target's figures and the page has half the nodes to build. Colours come from CSS classes, so light and dark
// follow prefers-color-scheme without redrawing.
import { esc } from './format.mjs';

const BAR = 5; // height of one bar
const GAP = 1; // between the bars of one case
const AXIS = 22; // the tick labels above the plot
const CHAR = 6.6; // average width of a 12 px label character, to shorten labels that would overflow

function niceCeil(v) {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

/** A scale from data to x: log10 or linear, over [lo, hi], onto [x0, x1]. */
export function makeScale(values, log, x0, x1, reference, binary = false) {
  const positive = values.filter((v) => v > 0 && Number.isFinite(v));
  if (reference !== undefined) positive.push(reference);
  let lo;
  let hi;
  if (log) {
    const min = positive.length ? Math.min(...positive) : 1;
    const max = positive.length ? Math.max(...positive) : 10;
    lo = 10 ** Math.floor(Math.log10(min));
    hi = 10 ** Math.ceil(Math.log10(max));
    if (hi <= lo) hi = lo * 10;
  } else {
    lo = 0;
    hi = niceCeil(positive.length ? Math.max(...positive) : 1);
  }
  const span = log ? Math.log10(hi) - Math.log10(lo) : hi - lo;
  const x = (v) => {
    const t = log ? (Math.log10(Math.max(v, lo)) - Math.log10(lo)) / span : (Math.max(v, 0) - lo) / span;
    return x0 + Math.min(Math.max(t, 0), 1) * (x1 - x0);
  };
  let ticks = [];
  if (log && binary) {
    // Bytes: ticks at powers of two (1 KiB, 32 KiB, 1 MiB...) rather than at 9.8 KiB; every
    // 32x, or every 4x when that leaves fewer than four.
    for (const every of [5, 2]) {
      ticks = [];
      for (let k = Math.ceil(Math.log2(lo) / every); 2 ** (every * k) <= hi * 1.0001; ++k) ticks.push(2 ** (every * k));
      if (ticks.length >= 4) break;
    }
    const room = Math.max(1, Math.floor((x1 - x0) / 52));
    const step = Math.ceil(ticks.length / room);
    if (step > 1) ticks = ticks.filter((_, i) => i % step === 0);
  } else if (log) {
    for (let v = lo; v <= hi * 1.0001; v *= 10) ticks.push(v);
    // Two decades or fewer (ratios): 2 and 5 between the powers of ten.
    if (ticks.length <= 3 && (x1 - x0) / ticks.length > 160) {
      ticks = ticks.flatMap((v, i) => (i === ticks.length - 1 ? [v] : [v, 2 * v, 5 * v]));
    }
    // Every other power of ten when they would crowd (a label is about 48 px wide).
    const room = Math.max(1, Math.floor((x1 - x0) / 48));
    const step = Math.ceil(ticks.length / room);
    if (step > 1) ticks = ticks.filter((_, i) => i % step === 0);
  } else {
    const n = Math.max(2, Math.min(5, Math.floor((x1 - x0) / 60)));
    for (let i = 0; i <= n; ++i) ticks.push((hi * i) / n);
  }
  return { x, lo, hi, ticks, log };
}

function shorten(text, room) {
  const max = Math.max(4, Math.floor(room / CHAR));
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * One chart. rows: [{ label, title, problem?, bars: [{ cls, value, p99?, text? }], limit? }]; width in
 * CSS pixels; log scale or linear; tick(v) formats axis labels; reference draws a vertical line
 * (1× in the ratio view) from which bars start; ariaLabel describes the chart for screen readers.
 */
export function barChart({ rows, width, log, tick, reference, ariaLabel, barsPerRow, barHeight = BAR, binary = false }) {
  const bar = barHeight;
  const gap = barHeight > BAR ? 2 : GAP;
  const wide = width >= 640;
  const labelW = wide ? Math.min(330, Math.round(width * 0.36)) : 0;
  const x0 = wide ? labelW + 10 : 6;
  const x1 = width - 14;
  const perRow = barsPerRow ?? Math.max(1, ...rows.map((r) => r.bars.length));
  const barsH = perRow * bar + (perRow - 1) * gap;
  const values = [];
  for (const r of rows) {
    for (const b of r.bars) values.push(b.value, b.p99 ?? 0);
    if (r.limit) values.push(r.limit);
  }
  const s = makeScale(values, log, x0, x1, reference, binary);
  const base = reference !== undefined ? s.x(reference) : s.x(s.lo);

  let body = '';
  let y = AXIS;
  for (const r of rows) {
    const labelLines = wide ? 1 : 1;
    const problemLine = r.problem ? 14 : 0;
    const top = y;
    const labelH = wide ? 0 : 15 * labelLines;
    const rowH = wide ? Math.max(barsH + 9, 22 + problemLine) : labelH + problemLine + barsH + 9;
    const barsTop = wide ? top + Math.round((Math.max(barsH + 9, 22) - barsH) / 2) : top + labelH + problemLine + 3;
    // An error (checksums differ, a failed case) is red; an advisory budget exceeded is amber.
    const kind = r.problem ? (r.warn ? ' row-warn' : ' row-problem') : '';
    body += `<g class="row${kind}">`;
    if (r.problem) body += `<rect class="problem-band" x="0" y="${top}" width="${width}" height="${rowH}"/>`;
    body += `<title>${esc(r.title ?? r.label)}${r.problem ? `\n${esc(r.problem)}` : ''}</title>`;
    const labelY = wide ? top + (r.problem ? 14 : rowH / 2 + 4) : top + 12;
    const label = shorten(`${r.problem && !r.warn ? '⚠ ' : ''}${r.label}`, wide ? labelW : width - 12);
    body += `<text class="label${r.problem ? ' problem' : ''}" x="${wide ? labelW : 6}" y="${labelY}"${wide ? ' text-anchor="end"' : ''}>${esc(label)}</text>`;
    if (r.problem) {
      const py = wide ? labelY + 14 : top + labelH + 11;
      body += `<text class="problem-text" x="${wide ? labelW : 6}" y="${py}"${wide ? ' text-anchor="end"' : ''}>${esc(shorten(r.problem, wide ? labelW : width - 12))}</text>`;
    }
    r.bars.forEach((b, i) => {
      const by = barsTop + i * (bar + gap);
      if (b.value === undefined || b.value === null) return;
      const xv = s.x(b.value);
      const left = Math.min(base, xv);
      const w = Math.max(1, Math.abs(xv - base));
      body += `<rect class="bar ${b.cls}" x="${left.toFixed(1)}" y="${by}" width="${w.toFixed(1)}" height="${bar}"/>`;
      if (b.text) {
        // The figure beside its bar, on the side away from the reference line.
        const after = xv >= base;
        const tx = after ? left + w + 3 : left - 3;
        body += `<text class="value" x="${tx.toFixed(1)}" y="${by + bar - 0.5}"${after ? '' : ' text-anchor="end"'}>${esc(b.text)}</text>`;
      }
      if (b.p99 > 0) {
        const xp = s.x(b.p99).toFixed(1);
        body += `<line class="p99" x1="${xp}" x2="${xp}" y1="${by - 1}" y2="${by + bar + 1}"/>`;
      }
    });
    if (r.limit) {
      const xl = s.x(r.limit).toFixed(1);
      body += `<line class="limit" x1="${xl}" x2="${xl}" y1="${barsTop - 3}" y2="${barsTop + barsH + 3}"/>`;
    }
    body += '</g>';
    y += rowH;
  }
  const height = y + 4;
  let axis = '';
  for (const t of s.ticks) {
    const xt = s.x(t).toFixed(1);
    axis += `<line class="grid" x1="${xt}" x2="${xt}" y1="${AXIS - 4}" y2="${height - 2}"/>`;
    axis += `<text class="tick" x="${xt}" y="${AXIS - 8}" text-anchor="middle">${esc(tick(t))}</text>`;
  }
  if (reference !== undefined) {
    const xr = base.toFixed(1);
    axis += `<line class="reference" x1="${xr}" x2="${xr}" y1="${AXIS - 4}" y2="${height - 2}"/>`;
  }
  return (
    `<svg class="chart" role="img" aria-label="${esc(ariaLabel)}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" data-scale="${log ? 'log' : 'linear'}">` +
    `${axis}${body}</svg>`
  );
}

/**
 * The capacity ladder: latency (ms, log) against offered rate (msg/s, log), one colour per system
 * (`l-0`, `l-1`... classes), p99 a solid line, p50 a dashed one; a point held is a filled dot, one
 * not held a hollow ring; `bound` (ms) a dashed horizontal line. systems: ladderOf(...).systems.
 */
export function ladderChart({ systems, width, bound, ariaLabel, tickRate, tickMs }) {
  const height = Math.max(240, Math.min(420, Math.round(width * 0.5)));
  const left = 58;
  const right = 14;
  const top = 12;
  const bottom = 34;
  const rates = [];
  const lat = [bound];
  for (const s of systems) {
    for (const p of s.points) {
      rates.push(p.rate);
      for (const v of [p.p50, p.p99]) if (v > 0) lat.push(v);
    }
  }
  const xs = makeScale(rates, true, left, width - right);
  // Up the page: a scale onto [top, bottom] (so its ticks are spaced as for a positive span), flipped.
  const down = makeScale(lat, true, top, height - bottom);
  const ys = { ticks: down.ticks, x: (v) => top + (height - bottom) - down.x(v) };
  let axis = '';
  for (const t of xs.ticks) {
    const x = xs.x(t).toFixed(1);
    axis += `<line class="grid" x1="${x}" x2="${x}" y1="${top}" y2="${height - bottom}"/>`;
    axis += `<text class="tick" x="${x}" y="${height - bottom + 14}" text-anchor="middle">${esc(tickRate(t))}</text>`;
  }
  for (const t of ys.ticks) {
    const y = ys.x(t).toFixed(1);
    axis += `<line class="grid" x1="${left}" x2="${width - right}" y1="${y}" y2="${y}"/>`;
    axis += `<text class="tick" x="${left - 5}" y="${(ys.x(t) + 4).toFixed(1)}" text-anchor="end">${esc(tickMs(t))}</text>`;
  }
  axis += `<text class="axis-label" x="${((left + width - right) / 2).toFixed(1)}" y="${height - 4}" text-anchor="middle">offered rate, messages/s (log)</text>`;
  axis += `<text class="axis-label" transform="translate(12 ${((top + height - bottom) / 2).toFixed(1)}) rotate(-90)" text-anchor="middle">latency (log)</text>`;
  const yb = ys.x(bound).toFixed(1);
  axis += `<line class="bound" x1="${left}" x2="${width - right}" y1="${yb}" y2="${yb}"/>`;
  axis += `<text class="bound-label" x="${width - right - 4}" y="${(ys.x(bound) - 5).toFixed(1)}" text-anchor="end">p99 bound ${esc(tickMs(bound))}</text>`;
  let body = '';
  systems.forEach((s, i) => {
    const cls = `l-${i % 9}`;
    const pts = (key) => s.points.filter((p) => p[key] > 0).map((p) => `${xs.x(p.rate).toFixed(1)},${ys.x(p[key]).toFixed(1)}`).join(' ');
    body += `<g class="system ${cls}" data-system="${esc(s.system)}">`;
    body += `<polyline class="p50-line" points="${pts('p50')}"/>`;
    body += `<polyline class="p99-line" points="${pts('p99')}"/>`;
    for (const p of s.points) {
      if (!(p.p99 > 0)) continue;
      const title = `${s.system} at ${p.rate} msg/s: ${p.held ? 'held' : 'not held'}; AA ${p.aa} of ${p.sent}${p.missing ? `, ${p.missing} unanswered` : ''}; p50 ${p.p50} ms, p99 ${p.p99} ms, max ${p.max} ms`;
      body += `<circle class="point${p.held ? ' held' : ' not-held'}" data-rate="${p.rate}" cx="${xs.x(p.rate).toFixed(1)}" cy="${ys.x(p.p99).toFixed(1)}" r="${p.held ? 4 : 3.5}"><title>${esc(title)}</title></circle>`;
    }
    body += '</g>';
  });
  return (
    `<svg class="ladder-chart" role="img" aria-label="${esc(ariaLabel)}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">` +
    `${axis}${body}</svg>`
  );
}
