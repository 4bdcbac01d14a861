import * as arrow from 'apache-arrow';
import { readFileSync } from 'node:fs';
const t = arrow.tableFromIPC(readFileSync('/tmp/x.arrow'));
console.log(t.schema.fields.map(f => `${f.name}:${f.type}`));
for (const r of t.toArray()) console.log(JSON.stringify(r.toJSON(), (k, v) => typeof v === 'bigint' ? String(v) : v));
console.log(t.getChild('bal').get(2), t.getChild('bal').data[0].values.slice(8,12));
