#!/usr/bin/env node
// Validates readings against bench/reading.schema.json. A small validator for the part of JSON
// Schema the schema uses (type, required, properties, items, enum, const), so no dependency is
// needed.   node bench/validate-reading.mjs READING.json...
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const schema = JSON.parse(readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), 'reading.schema.json'), 'utf8'));

function typeOf(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** The problems of `value` against `s`, as "path: message" lines. */
export function validate(value, s = schema, where = '$') {
  const problems = [];
  if (s.const !== undefined && value !== s.const) problems.push(`${where}: must be ${JSON.stringify(s.const)}`);
  if (s.enum && !s.enum.includes(value)) problems.push(`${where}: must be one of ${s.enum.join(', ')}`);
  if (s.type) {
    const t = typeOf(value);
    const ok = s.type === t || (s.type === 'number' && t === 'integer');
    if (!ok) return [...problems, `${where}: must be ${s.type}, is ${t}`];
  }
  if (s.type === 'object' || s.properties) {
    for (const key of s.required ?? []) if (!(key in value)) problems.push(`${where}: missing ${key}`);
    for (const [key, sub] of Object.entries(s.properties ?? {})) {
      if (key in value) problems.push(...validate(value[key], sub, `${where}.${key}`));
    }
  }
  if (s.type === 'array' && s.items) value.forEach((item, i) => problems.push(...validate(item, s.items, `${where}[${i}]`)));
  if (s.format === 'date-time' && typeof value === 'string' && Number.isNaN(Date.parse(value))) problems.push(`${where}: not a date-time`);
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  let bad = 0;
  for (const file of process.argv.slice(2)) {
    const problems = validate(JSON.parse(readFileSync(file, 'utf8')));
    if (problems.length) {
      bad++;
      console.error(`${file}: ${problems.length} problem(s)\n  ${problems.slice(0, 20).join('\n  ')}`);
    } else {
      console.log(`${file}: valid (quire-reading/1)`);
    }
  }
  process.exit(bad ? 1 : 0);
}
