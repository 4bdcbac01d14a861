#!/usr/bin/env bash
# Partitioned datasets on the command line (ctest cli_dataset, native only): `view run --out DIR
# --partition-by COL` writes Hive-style parts and a manifest; three writers over `quire split`'s
# ranges, each with its own --part, merged by `quire dataset merge`, hold the same rows as one
# process; `quire query DIR` prunes by partition and statistics; unsafe partition values stay
# inside DIR; a part name taken twice, a missing or cut part, and a writer's leftovers are refused
# or ignored, never counted.
#   tests/cli_dataset.sh path/to/quire
set -uo pipefail
quire=$(realpath "${1:?usage: cli_dataset.sh path/to/quire}") || exit 1
here=$(cd "$(dirname "$0")" && pwd) || exit 1
golden=$here/data/dataset
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

# shellcheck source=cli_lib.sh
source "$here/cli_lib.sh"

cat >view.json <<'JSON'
{"resourceType":"ViewDefinition","resource":"Patient","select":[{"column":[
  {"name":"id","path":"id","type":"id"},
  {"name":"gender","path":"gender","type":"code"},
  {"name":"born","path":"birthDate","type":"date"}]}]}
JSON
# 3,000 patients: four genders (one absent), births over 60 years.
awk 'BEGIN { split("female male other", g, " ");
  for (i = 0; i < 3000; i++) {
    k = i % 4; gender = k < 3 ? ",\"gender\":\"" g[k + 1] "\"" : "";
    printf "{\"resourceType\":\"Patient\",\"id\":\"p%d\"%s,\"birthDate\":\"%d-0%d-1%d\"}\n", i, gender, 1950 + i % 60, 1 + i % 9, i % 10
  } }' >patients.ndjson

run 0 "view run to one .ndjson" -- view run view.json patients.ndjson --out all.ndjson --quiet
sort all.ndjson >all.sorted

# One writer: parts, a fragment and the manifest at once.
run 0 "view run --partition-by" -- view run view.json patients.ndjson --out ds --partition-by gender
has "3000 rows in 4 partitions of gender" "the summary line"
for d in gender=female gender=male gender=other gender=__HIVE_DEFAULT_PARTITION__; do
  [[ -f ds/$d/part-00000.quire ]] || fail "no ds/$d/part-00000.quire"
done
[[ -f ds/_quire_dataset.json && -f ds/_quire_parts/00000.json ]] || fail "no manifest or fragment"
run 0 "query DIR --count" -- query ds --count
[[ $(cat out.txt) == 3000 ]] || fail "query ds --count gave $(cat out.txt)"
run 0 "query DIR rows" -- query ds
sort out.txt | cmp -s - all.sorted || fail "the dataset's rows are not the view's rows"
run 0 "query DIR --where on the partition" -- query ds --where "gender = 'male'" --explain
[[ $(cat out.txt) == '{"files":4,"skippedByPartition":3,"skippedByStatistics":0,"scanned":["gender=male/part-00000.quire"]}' ]] ||
  fail "explain of gender = 'male': $(cat out.txt)"
run 0 "query DIR --where on the partition, counted" -- query ds --where "gender = 'male'" --count
[[ $(cat out.txt) == 750 ]] || fail "750 males expected, got $(cat out.txt)"
run 0 "query DIR --find" -- query ds --find id=p7
[[ $(cat out.txt) == '{"id":"p7","gender":null,"born":"1957-08-17"}' ]] || fail "find p7: $(cat out.txt)"
run 0 "query DIR --csv with a limit across files" -- query ds --csv --columns id --offset 749 --limit 2
[[ $(cat out.txt) == $'id\np2999\np0' ]] || fail "csv across files: $(cat out.txt)"
run 2 "query DIR --sum" -- query ds --sum born
run 2 "query DIR on an unknown column" -- query ds --where "nope = 1" --count

# Three writers over three ranges, each its own part; then the merge.
"$quire" split patients.ndjson --parts 3 >ranges.txt || fail "split"
k=0
while IFS= read -r line; do
  s=$(sed -E 's/.*"start":([0-9]+).*/\1/' <<<"$line")
  e=$(sed -E 's/.*"end":([0-9]+).*/\1/' <<<"$line")
  "$quire" view run view.json patients.ndjson --range "$s:$e" --out ds3 --partition-by gender --part "task-$k" --quiet &
  k=$((k + 1))
done <ranges.txt
wait
[[ -f ds3/_quire_dataset.json ]] && fail "writers with --part must leave the merge to the last step"
[[ -n $(ls -d ds3/gender=* 2>/dev/null) ]] && fail "staged parts must not be in place before the merge: $(ls ds3)"
[[ $(ls ds3/_quire_parts/*.json | wc -l) == 3 ]] || fail "three fragments expected: $(ls ds3/_quire_parts)"
# A writer killed before its fragment: staged parts and a temporary file, none of it counted.
mkdir -p ds3/_quire_parts/task-9/gender=male
cp ds3/_quire_parts/task-0/gender=male/part-task-0.quire ds3/_quire_parts/task-9/gender=male/part-task-9.quire
touch ds3/_quire_parts/task-9/gender=male/part-task-9.quire.tmp-12345
run 0 "dataset merge" -- dataset merge ds3
has "12 files, 3000 rows" "the merge's summary"
[[ -f ds3/gender=male/part-task-9.quire ]] && fail "a killed writer's staged part was moved into place"
[[ -f ds3/gender=male/part-task-0.quire && -f ds3/gender=other/part-task-2.quire ]] || fail "parts not in place"
run 0 "query of the merged dataset" -- query ds3
sort out.txt | cmp -s - all.sorted || fail "three writers' dataset does not hold the view's rows once each"
cp ds3/_quire_dataset.json first-merge.json
run 0 "a second merge" -- dataset merge ds3
cmp -s ds3/_quire_dataset.json first-merge.json || fail "a second merge changed the manifest"

# A part name taken twice keeps the first writer's part.
before=$(cksum <ds3/gender=male/part-task-0.quire)
run 2 "a second writer with a taken part name" -- view run view.json patients.ndjson --out ds3 --partition-by gender --part task-0 --quiet
has "is taken" "the taken name's message"
[[ $(cksum <ds3/gender=male/part-task-0.quire) == "$before" ]] || fail "the first writer's part changed"
run 2 "a bad part name" -- view run view.json patients.ndjson --out ds3 --partition-by gender --part ../x
run 2 "--part without --partition-by" -- view run view.json patients.ndjson --out x.quire --part a
run 2 "--partition-by without --out" -- view run view.json patients.ndjson --partition-by gender
run 2 "--partition-by an unknown column" -- view run view.json patients.ndjson --out dsx --partition-by sex

# A manifest that disagrees with its files: a cut part, a missing one.
cp -r ds3 cut
truncate -s -10 cut/gender=other/part-task-1.quire
run 1 "merge over a cut part" -- dataset merge cut
has "CORRUPT_FILE" "the cut part's code"
run 1 "query over a cut part" -- query cut --where "gender = 'other'" --count
has "CORRUPT_FILE" "the cut part's code, queried"
run 0 "query of the others still answers" -- query cut --where "gender = 'female'" --count
rm cut/gender=female/part-task-2.quire
run 1 "merge over a missing part" -- dataset merge cut
has "is not there" "the missing part's message"
run 1 "merge with no fragments" -- dataset merge nothing

# Parquet beside each part: moved into place with it.
run 0 "view run --partition-by --parquet" -- view run view.json patients.ndjson --out dsp --partition-by gender --parquet --quiet
[[ -f dsp/gender=female/part-00000.parquet && -f dsp/gender=__HIVE_DEFAULT_PARTITION__/part-00000.parquet ]] ||
  fail "no Parquet beside the parts: $(ls dsp/*)"
run 2 "--parquet without --partition-by" -- view run view.json patients.ndjson --out x.quire --parquet

# Unsafe partition values stay inside DIR, escaped.
printf '%s\n' '{"resourceType":"Patient","id":"a","gender":"../../escaped"}' \
  '{"resourceType":"Patient","id":"b","gender":"a/b"}' '{"resourceType":"Patient","id":"c","gender":"x:y=z%"}' >unsafe.ndjson
run 0 "unsafe partition values" -- view run view.json unsafe.ndjson --out unsafe --partition-by gender --quiet
[[ -f "unsafe/gender=..%2F..%2Fescaped/part-00000.quire" && -f "unsafe/gender=a%2Fb/part-00000.quire" &&
  -f "unsafe/gender=x%3Ay%3Dz%25/part-00000.quire" ]] || fail "escaped folders: $(ls unsafe)"
[[ -z $(find . -name escaped -o -name 'b' -type d) ]] || fail "a partition value made a folder outside its own"
run 0 "query by an unsafe value" -- query unsafe --where "gender = 'a/b'" --columns id
[[ $(cat out.txt) == '{"id":"b"}' ]] || fail "the a/b partition: $(cat out.txt)"
printf '{"resourceType":"Patient","id":"l","gender":"%s"}\n' "$(head -c 300 /dev/zero | tr '\0' x)" >long.ndjson
run 2 "a value too long for a folder name" -- view run view.json long.ndjson --out long --partition-by gender --quiet
has "longer than 255 bytes" "the long value's message"

# Ranges that overlap or leave bytes out are refused by the merge: no row counted twice or lost.
size=$(wc -c <patients.ndjson)
half=$((size / 2))
"$quire" view run view.json patients.ndjson --range "0:$((half + 500))" --out overlap --partition-by gender --part a --quiet
"$quire" view run view.json patients.ndjson --range "$half:$size" --out overlap --partition-by gender --part b --quiet
run 2 "a merge of overlapping ranges" -- dataset merge overlap
has "the ranges of parts a and b overlap at bytes $half..$((half + 500)) of patients.ndjson" "the overlap's message"
[[ -f overlap/_quire_dataset.json ]] && fail "a manifest was written over overlapping ranges"
"$quire" view run view.json patients.ndjson --range "0:$half" --out gap --partition-by gender --part a --quiet
run 2 "a merge with a range missing" -- dataset merge gap
has "bytes $half..$size of patients.ndjson ($size bytes) are in no writer's range: a task is missing" "the gap's message"
"$quire" view run view.json patients.ndjson --range "$half:$((size + 999))" --out gap --partition-by gender --part b --quiet
run 0 "the missing range added, past the end" -- dataset merge gap
has "3000 rows" "the complete merge's rows"

# The checked-in dataset: the CLI prints its golden files (js/test/dataset.test.mjs holds the npm
# package to the same bytes).
"$quire" query "$golden/observations" | cmp -s - "$golden/rows.ndjson" || fail "the checked-in dataset's rows"
"$quire" query "$golden/observations" --where "status = 'final' and value > 1" --explain |
  cmp -s - "$golden/explain_final.json" || fail "the checked-in dataset's explain"
"$quire" query "$golden/observations" --csv --offset 1 --limit 4 | cmp -s - "$golden/rows_1_4.csv" ||
  fail "the checked-in dataset's CSV rows 1-4"

if ((failures)); then
  echo "cli_dataset: $failures failures"
  exit 1
fi
echo "cli_dataset: all passed"
