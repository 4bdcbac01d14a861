// Writes ecmascript_doubles.tsv: doubles (as their IEEE bits) and JavaScript's text for them,
// String(v), which is what JSON.stringify prints. quire's number printer must give the same text.
// Run: node tests/data/numbers/generate.mjs
import { writeFileSync } from 'node:fs';

let s = 0x1234567n;
const next = () => { s = (s * 6364136223846793005n + 1442695040888963407n) & ((1n << 64n) - 1n); return s; };
const out = ['# bits (hex)\ttext: String(v) in Node 20 (V8), written by tests/data/numbers/generate.mjs'];
const buf = new DataView(new ArrayBuffer(8));
const add = (v) => { buf.setFloat64(0, v); out.push(buf.getBigUint64(0).toString(16).padStart(16, '0') + '\t' + String(v)); };
[0.1, 0.2, 0.3, 1 / 3, 100, 1e14, 1e15, 1e16, 1e20, 1e21, 1e22, 123456789012345.6, 0.0001, 0.00001, 0.000001, 0.0000001, 1e-7,
  5e-324, 1.7976931348623157e308, 2.5, 0.05, 99999.99, -0.07, -1234.5, 4503599627370496.5, 9007199254740993, 0.000999999,
  12.000001, 1234567.891234, 123e-20, 0.1 + 0.2, -1e-7, 2 ** 53, 2 ** 63, 1.5e300, -2.2250738585072014e-308].forEach(add);
for (let i = 0; i < 3000; i++) {
  const k = Number(next() % 5n), n = next();
  let v;
  if (k === 0) v = Number(n % 10000000n) / 100;                 // cents
  else if (k === 1) v = Number(n % 100000000000n) / 1e6;        // micro units
  else if (k === 2) v = -Number(n % 1000n) / 1000;              // negative thousandths
  else if (k === 3) { buf.setBigUint64(0, n); v = buf.getFloat64(0); }  // any bits
  else v = Number(n % 1000000n) * Math.pow(10, Number(n % 41n) - 20);  // every magnitude
  if (Number.isFinite(v) && !Object.is(v, -0)) add(v);
}
writeFileSync(new URL('./ecmascript_doubles.tsv', import.meta.url), out.join('\n') + '\n');
