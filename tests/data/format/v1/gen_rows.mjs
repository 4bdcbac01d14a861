// 300 rows: every index domain (ints: id, age, active, born, seen; reals: score; text: name, city)
let s = 12345;
const rnd = (n) => { s = (s * 1103515245 + 12345) % 2147483648; return (s >> 8) % n; };
const names = ['Ana Okafor', 'Ben Lima', 'Chen Wu', 'Dana Smith', 'Eli Okafor', 'Fay Jones', 'Gus Lagos', 'Hana Mori'];
const cities = ['Lagos', 'Lima', 'Oslo', 'Pune', 'Kyiv'];
const lines = [];
for (let i = 0; i < 300; i++) {
  const id = 1000 + ((i * 7919) % 300);
  const born = `19${50 + rnd(50)}-0${1 + rnd(9)}-1${rnd(10)}`;
  const seen = `2024-0${1 + rnd(9)}-1${rnd(10)}T0${rnd(10)}:1${rnd(10)}:00Z`;
  const row = {id, name: names[rnd(names.length)] + (i % 3 ? '' : ' ' + i), city: cities[rnd(cities.length)],
    age: rnd(90), active: rnd(2) === 1, score: rnd(10000) / 100, born, seen};
  if (i % 17 === 0) row.age = null;
  lines.push(JSON.stringify(row));
}
process.stdout.write(lines.join('\n') + '\n');
