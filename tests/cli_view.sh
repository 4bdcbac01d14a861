#!/usr/bin/env bash
# `quire view run` and `quire fhirpath` (ctest cli_view, native only): each output kind gives the
# bytes core gives (the golden files in tests/data/view_output/, which view_output_test.cpp pins
# core to), an index on a view column answers `quire query --find`, standard input works, and a
# bad view, a bad line and a failed run end with the right code, line and no half-written file;
# --threads gives the same bytes and errors for any number of threads.
#   tests/cli_view.sh path/to/quire
set -uo pipefail
quire=$(realpath "${1:?usage: cli_view.sh path/to/quire}") || exit 1
here=$(cd "$(dirname "$0")" && pwd) || exit 1
data=$here/data/view_output
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

# shellcheck source=cli_lib.sh
source "$here/cli_lib.sh"

view="$data/patient_view.json"
input="$data/patients.ndjson"

run 0 "rows to standard output" -- view run "$view" "$input"
same out.txt "$data/rows.ndjson" "NDJSON on standard output"
has "-: 5 resources, 4 rows" "the summary line counts resources and rows"

run 0 "rows to an NDJSON file" -- view run "$view" "$input" --out rows.ndjson --quiet
same rows.ndjson "$data/rows.ndjson" "--out rows.ndjson"
[[ -s out.txt || -s err.txt ]] && fail "--quiet with --out prints nothing"

run 0 "rows to a CSV file" -- view run "$view" "$input" --out rows.csv
same rows.csv "$data/rows.csv" "--out rows.csv"
has "rows.csv: 5 resources, 4 rows, $(wc -c <"$data/rows.csv" | tr -d ' ') bytes (csv" "the summary names the bytes written"

run 0 "rows to an indexed table" -- view run "$view" "$input" --out table.quire --index id:hash --index family:sorted --chunk-rows 2
run 0 "the table's rows" -- query table.quire
same out.txt "$data/rows.ndjson" "the .quire table's rows are the view's rows"
run 0 "a lookup by the hash index" -- query table.quire --find id=pt3 --columns id,family,given
printf '{"id":"pt3","family":"O\\"Neil","given":["Zo\xc3\xab"]}\n' >want.txt
same out.txt want.txt "--find on the indexed id"
run 0 "the index is used" -- query table.quire --where "id = 'pt4'" --explain
grep -q '"kind":"hash"' out.txt || fail "the plan of id = 'pt4' uses the hash index: $(cat out.txt)"
run 0 "the table verifies" -- inspect table.quire --verify
ls table.quire.tmp-* >/dev/null 2>&1 && fail "a temporary file is left beside the table"

run 0 "standard input" -- view run "$view" - <"$input"
same out.txt "$data/rows.ndjson" "NDJSON from standard input"
"$quire" view run "$view" - <"$input" --out stdin.csv 2>/dev/null || fail "- with --out"
same stdin.csv "$data/rows.csv" "standard input into CSV"

# A pretty-printed Bundle (one document, not NDJSON), and several inputs into one output.
{
  printf '{\n  "resourceType": "Bundle",\n  "type": "collection",\n  "entry": [\n'
  printf '    {"resource": {"resourceType": "Patient", "id": "b1", "gender": "other"}},\n'
  printf '    {"resource": {"resourceType": "Patient", "id": "b2"}}\n  ]\n}\n'
} >bundle.json
run 0 "a Bundle file and NDJSON together" -- view run "$view" bundle.json "$input" --out both.ndjson
{
  printf '{"id":"b1","active":null,"gender":"other","birth_date":null,"births":null,"phone":null,"family":null,"given":[]}\n'
  printf '{"id":"b2","active":null,"gender":null,"birth_date":null,"births":null,"phone":null,"family":null,"given":[]}\n'
  cat "$data/rows.ndjson"
} >want.txt
same both.ndjson want.txt "a Bundle's entries, then the NDJSON's rows"
run 0 "a Bundle from standard input" -- view run "$view" - <bundle.json
head -2 want.txt >want2.txt
same out.txt want2.txt "a pretty-printed Bundle on standard input"

# A bad view: usage (2), the error names the place in the view.
printf '{"resource":"Patient","select":[{"column":[{"name":"id","path":"id"},{"name":"x","path":"name.nosuch()"}]}]}' >bad_view.json
run 2 "a view calling an unknown function" -- view run bad_view.json "$input"
has "bad_view.json: UNKNOWN_FUNCTION" "the error line starts with the view file and the code"
has "select[0].column[1].path" "the error names the path in the view"
printf '{"select":[]}' >no_resource.json
run 2 "a view without a resource" -- view run no_resource.json "$input"
has "INVALID_VIEW" "a view breaking a rule is INVALID_VIEW"

# A line that is not JSON: bad input (1), with its line number; no half-written output.
{ head -3 "$input"; printf '{"resourceType": nope}\n'; tail -1 "$input"; } >bad.ndjson
run 1 "a line that is not JSON" -- view run "$view" bad.ndjson --out half.quire --index id:hash
has "bad.ndjson: INVALID_JSON" "the error names the input"
has "line 4" "the error names the line"
[[ -e half.quire ]] && fail "a failed run leaves no table"
ls half.quire.tmp-* >/dev/null 2>&1 && fail "a failed run leaves no temporary file"

# A value its column cannot hold.
printf '{"resource":"Patient","select":[{"column":[{"name":"b","path":"gender","type":"boolean"}]}]}' >typed.json
run 1 "a string in a boolean column" -- view run typed.json "$input" --out typed.csv
has "in resource 1 (Patient/pt1), line 1" "the mismatch names its resource and line"
has "column b (boolean, declared boolean) cannot hold a string \"female\"" "the mismatch names column and value"
[[ -e typed.csv ]] && fail "a failed run leaves no CSV"

# Usage mistakes.
run 2 "an output kind the extension does not name" -- view run "$view" "$input" --out rows.txt
run 2 "an index on CSV output" -- view run "$view" "$input" --out rows.csv --index id:hash
run 2 "an index on no such column" -- view run "$view" "$input" --out t.quire --index nope:hash
has "NO_SUCH_COLUMN" "an unknown index column"
run 2 "no input" -- view run "$view"
run 1 "a missing input" -- view run "$view" missing.ndjson
has "missing.ndjson: FILE_NOT_FOUND" "a missing input's line"

# Threads: NDJSON of a few MiB (1 MiB pieces, each cut among the threads) gives the same bytes, the
# same summary counts and the same error on one thread and on three.
sed -e '$a\' "$input" >copy.ndjson  # with a line end after its last line
for i in $(seq 6000); do cat copy.ndjson; done >many.ndjson
for kind in ndjson csv quire; do
  run 0 "many lines as $kind on one thread" -- view run "$view" many.ndjson --out one.$kind --threads 1
  one_summary=${err#*: }
  one_summary=${one_summary% (*}
  run 0 "many lines as $kind on three threads" -- view run "$view" many.ndjson --out three.$kind --threads 3
  summary=${err#*: }
  summary=${summary% (*}
  [[ $summary == "$one_summary" ]] || fail "three threads' summary: $summary (one thread's: $one_summary)"
  same three.$kind one.$kind "three threads write one thread's $kind bytes"
done
{ head -20000 many.ndjson; printf '{"resourceType": nope}\n'; tail -9000 many.ndjson; } >many_bad.ndjson
run 1 "a bad line among many on one thread" -- view run "$view" many_bad.ndjson --threads 1
one_err=$err
run 1 "a bad line among many on three threads" -- view run "$view" many_bad.ndjson --threads 3
[[ $err == "$one_err" ]] || fail "three threads' error: $err (one thread's: $one_err)"
has "line 20001" "the error names the bad line"
run 2 "--threads that is not a count" -- view run "$view" "$input" --threads many

# quire fhirpath: one JSON array per resource.
run 0 "fhirpath over NDJSON" -- fhirpath "name.given" "$input"
printf '["Ann","B."]\n[]\n["Bo"]\n["Zo\xc3\xab"]\n[]\n' >want.txt
same out.txt want.txt "fhirpath gives one array per line"
run 0 "fhirpath over a Bundle" -- fhirpath "entry.resource.id" bundle.json
printf '["b1","b2"]\n' >want.txt
same out.txt want.txt "fhirpath over a Bundle as one resource"
run 0 "fhirpath from standard input" -- fhirpath "id" - <"$input"
printf '["pt1"]\n["o1"]\n["pt2"]\n["pt3"]\n["pt4"]\n' >want.txt
same out.txt want.txt "fhirpath over standard input"
run 2 "fhirpath with an expression that does not parse" -- fhirpath "name.(" "$input"
has "INVALID_FHIRPATH" "a bad expression"
run 1 "fhirpath over a bad line" -- fhirpath "id" bad.ndjson
has "line 4" "fhirpath names the bad line"

# Bundles among NDJSON lines: a view over Observations gets each Bundle's Observations, through the
# CLI as through the library and the npm package (tests/view_bundle_test.cpp, js/test/view.test.mjs).
obs_view='{"resource":"Observation","select":[{"column":[{"name":"id","path":"id"}]}]}'
printf '%s\n' "$obs_view" >obs_view.json
{
  printf '{"resourceType":"Observation","id":"o1","status":"final"}\n'
  printf '{"resourceType":"Bundle","type":"collection","entry":[{"resource":{"resourceType":"Observation","id":"b1"}},{"fullUrl":"x"},{"resource":{"resourceType":"Patient","id":"p"}},{"resource":{"resourceType":"Observation","id":"b2"}}]}\n'
  printf '{"resourceType":"Observation","id":"o2","status":"final"}\n'
} >obs.ndjson
run 0 "a view over NDJSON with a Bundle line" -- view run obs_view.json obs.ndjson
printf '{"id":"o1"}\n{"id":"b1"}\n{"id":"b2"}\n{"id":"o2"}\n' >want.txt
same out.txt want.txt "a Bundle line gives its entries' Observations, in order"
run 0 "the same to CSV" -- view run obs_view.json obs.ndjson --out obs.csv
printf 'id\no1\nb1\nb2\no2\n' >want.txt
same obs.csv want.txt "CSV rows of a Bundle line"

# One limit for every NDJSON reader: a line of 16 MiB + 1 bytes is refused by ndjson stats, view
# run, convert and fhirpath with the same LINE_TOO_LONG text; one of 16 MiB is not too long.
long_line() {  # long_line BYTES: a Patient line of exactly BYTES bytes, after a short first line
  printf '{"resourceType":"Patient","id":"a"}\n'
  local head='{"resourceType":"Patient","id":"b","gender":"'
  printf '%s' "$head"
  head -c $(($1 - ${#head} - 2)) /dev/zero | tr '\0' x
  printf '"}\n'
}
long_line $((16 * 1024 * 1024 + 1)) >long.ndjson
long_line $((16 * 1024 * 1024)) >max.ndjson
want_long='LINE_TOO_LONG at offset 36, line 2, column 1: line 2 is longer than max_line_bytes (16777216 bytes)'
for cmd in "ndjson stats long.ndjson" "view run $view long.ndjson" "convert long.ndjson long.quire" "fhirpath id long.ndjson"; do
  # shellcheck disable=SC2086
  run 1 "a line over the limit: $cmd" -- $cmd
  has "$want_long" "$cmd refuses the long line with the feeder's text"
done
[[ -e long.quire ]] && fail "convert left a half-written long.quire"
for cmd in "ndjson stats max.ndjson" "view run $view max.ndjson" "convert max.ndjson max.quire" "fhirpath id max.ndjson"; do
  # shellcheck disable=SC2086
  "$quire" $cmd >out.txt 2>err.txt
  grep -q LINE_TOO_LONG err.txt && fail "$cmd: a line of exactly the limit is too long: $(head -c 300 err.txt)"
done
echo "ok: a line of exactly the limit is read by every command"
rm -f long.ndjson max.ndjson max.quire

# Byte ranges: quire split's ranges, each run by view run --range, give the whole file's rows in
# order; so do three ranges cut at every pair of bytes (a cut inside a line gives the line to the
# range it starts in).
for parts in 1 2 3 7; do
  "$quire" split "$input" --parts "$parts" >ranges.txt || fail "split --parts $parts"
  [[ $(wc -l <ranges.txt) == "$parts" ]] || fail "split --parts $parts printed $(wc -l <ranges.txt) ranges"
  : >joined.ndjson
  while IFS= read -r r; do
    s=${r#*\"start\":}; s=${s%%,*}
    e=${r#*\"end\":}; e=${e%%,*}
    "$quire" view run "$view" "$input" --range "$s:$e" --quiet >>joined.ndjson || fail "--range $s:$e"
  done <ranges.txt
  same joined.ndjson "$data/rows.ndjson" "the rows of $parts split ranges, one after another"
done
size=$(wc -c <"$input" | tr -d ' ')
for ((a = 0; a <= size; a += 37)); do
  for ((b = a; b <= size; b += 53)); do
    { "$quire" view run "$view" "$input" --range "0:$a" --quiet
      "$quire" view run "$view" "$input" --range "$a:$b" --quiet
      "$quire" view run "$view" "$input" --range "$b:$size" --quiet; } >joined.ndjson
    cmp -s joined.ndjson "$data/rows.ndjson" || { fail "ranges cut at $a and $b do not give the file's rows"; break 2; }
  done
done
echo "ok: ranges cut anywhere give every row once"
run 2 "a range that ends before it starts" -- view run "$view" "$input" --range 9:3
has "INVALID_ARGUMENT: a range is START:END" "the bad range's message"
run 2 "--range with two inputs" -- view run "$view" "$input" "$input" --range 0:10
run 2 "--range of a JSON document" -- view run "$view" "$data/patient_view.json" --range 0:10
run 2 "split without --parts" -- split "$input"
run 2 "split into no parts" -- split "$input" --parts 0

if ((failures)); then
  echo "$failures failed"
  exit 1
fi
echo "all passed"
