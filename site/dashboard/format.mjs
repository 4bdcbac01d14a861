// Figures as people read them, in the units bench/report.mjs and `quire compare` print.

export function duration(ns) {
  if (ns === undefined || ns === null || Number.isNaN(ns)) return '—';
  if (ns < 1e3) return `${ns.toFixed(0)} ns`;
  if (ns < 1e6) return `${(ns / 1e3).toFixed(ns < 1e4 ? 2 : 1)} µs`;
  if (ns < 1e9) return `${(ns / 1e6).toFixed(ns < 1e7 ? 2 : 1)} ms`;
  return `${(ns / 1e9).toFixed(2)} s`;
}

export function bytes(b) {
  if (b === undefined || b === null || Number.isNaN(b)) return '—';
  if (b < 1024) return `${Math.round(b)} B`;
  if (b < 1048576) return `${(b / 1024).toFixed(1)} KiB`;
  if (b < 1073741824) return `${(b / 1048576).toFixed(1)} MiB`;
  return `${(b / 1073741824).toFixed(2)} GiB`;
}

export function ratio(r) {
  return r === undefined || r === null ? '—' : `${r.toFixed(r < 10 ? 2 : 1)}×`;
}

export function millis(ms) {
  return ms === undefined || ms === null ? '—' : `${ms.toFixed(1)} ms`;
}

export function count(n) {
  return n === undefined || n === null ? '—' : Math.round(n).toLocaleString('en-US');
}

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Text made safe for HTML and SVG markup (case names and errors come from files people drop). */
export function esc(text) {
  return String(text).replace(/[&<>"']/g, (ch) => ESCAPES[ch]);
}

/** An axis label: `duration` without the trailing zeros that only clutter a tick (1 µs, 10 µs). */
export function tickDuration(ns) {
  return duration(ns).replace(/\.0+ /, ' ').replace(/(\.\d*?)0+ /, '$1 ');
}

export function tickBytes(b) {
  return bytes(b).replace(/\.0+ /, ' ');
}

export function tickRatio(r) {
  return `${Number(r.toPrecision(3))}×`;
}
