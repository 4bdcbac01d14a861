#!/usr/bin/env bash
# The `quire` CLI's exit codes and error line (ctest cli_exit_codes, native only):
# 0 success, 1 bad input, 2 bad usage or a mistake in a query the user typed.
#   tests/cli_exit_codes.sh path/to/quire
set -uo pipefail
quire=$(realpath "${1:?usage: cli_exit_codes.sh path/to/quire}") || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
printf '[1, 2]\n' > good.json
printf '[1,\n  2,]\n' > bad.json
printf 'id,name\n1,a\n2,b\n' > people.csv

failures=0
# expect CODE DESCRIPTION -- COMMAND...: runs it, checks its exit code, keeps its stderr in $err.
expect() {
  local want=$1 what=$2
  shift 3
  err=$("$quire" "$@" 2>&1 >/dev/null)
  local got=$?
  if [[ $got != "$want" ]]; then
    echo "FAIL: $what: quire $* exited $got, expected $want"
    echo "$err" | sed 's/^/  stderr: /'
    failures=$((failures + 1))
  else
    echo "ok: $what (exit $got)"
  fi
}
# line TEXT DESCRIPTION: the last command's stderr holds exactly the line TEXT.
line() {
  if ! grep -qxF -- "$1" <<<"$err"; then
    echo "FAIL: $2: stderr has no line '$1':"
    echo "$err" | sed 's/^/  stderr: /'
    failures=$((failures + 1))
  fi
}

expect 0 "a good file" -- json check good.json
expect 1 "a file that is not JSON" -- json check bad.json
line "bad.json: INVALID_JSON at offset 8, line 2, column 5: unexpected character or structure" "the error line is FILE: and core's describe()"
expect 1 "a good file and a bad one" -- json check good.json bad.json
expect 1 "a missing file" -- json check missing.json
line "missing.json: FILE_NOT_FOUND: cannot open missing.json: No such file or directory" "a missing file's line"
expect 2 "an unknown option" -- json check --bogus good.json
expect 2 "an unknown command" -- nope
expect 2 "no arguments" --
expect 2 "an option without its number" -- json check --max-depth many good.json
expect 2 "a bad ACK code" -- hl7 ack --code ZZ good.json
expect 0 "a conversion" -- convert people.csv people.quire
expect 2 "a --where that does not parse" -- query people.quire --where "id =="
expect 2 "a --where naming no such column" -- query people.quire --where "nope = 1"
line "people.quire: NO_SUCH_COLUMN: no column named 'nope'" "an unknown column's line"
expect 2 "a --sum naming no such column" -- query people.quire --sum nope
expect 2 "a --find naming no such column" -- query people.quire --find nope=1
expect 2 "a --sort naming no such column" -- convert people.csv sorted.quire --sort nope
expect 2 "a --find key the column cannot hold" -- query people.quire --find id=abc
expect 1 "a .quire file that is not one" -- query good.json
# Write options go through core's parser (the npm package's): out of range is its INVALID_ARGUMENT.
expect 2 "--chunk-rows 0" -- convert people.csv zero.quire --chunk-rows 0
line "--chunk-rows: INVALID_ARGUMENT: chunk_rows must be 1..16777216" "--chunk-rows 0 in core's words"
expect 2 "--level 99" -- convert people.csv level.quire --level 99
line "--level: INVALID_ARGUMENT: compression_level must be 1..19" "--level 99 in core's words"
expect 2 "--level that is not a number" -- convert people.csv level.quire --level high
line "--level: INVALID_ARGUMENT: --level takes a whole number up to 4294967295" "a --level that is no number"
expect 2 "--chunk-rows 0 in view run" -- view run view.json good.json --chunk-rows 0
expect 2 "an --index without its kind" -- convert people.csv index.quire --index id
expect 2 "--code ZZ in core's words" -- hl7 ack --code ZZ good.json
line "--code: INVALID_ARGUMENT: ack code must be AA, AE, AR, CA, CE or CR" "a bad ACK code's line"
expect 0 "rows as CSV" -- query people.quire --csv
csv=$("$quire" query people.quire --where "id = 2" --csv)
if [[ $csv != $'id,name\n2,b' ]]; then
  echo "FAIL: query --csv printed '$csv'"
  failures=$((failures + 1))
fi
expect 2 "--csv with --count" -- query people.quire --csv --count
# --storage reports a growing store's commits: a table says what it is, not that no commit checks.
expect 2 "inspect --storage of a table" -- inspect people.quire --storage
line "people.quire: INVALID_ARGUMENT at offset 6: a table of version 4, not a growing store (version 2): its storage by column is the file's storage() (quire inspect without --storage)" "inspect --storage of a table names its version"
# A .quire file is read a page at a time unless --load says otherwise.
for want in "ranges:" "read:--load read" "mmap:--load mmap"; do
  loaded=$("$quire" inspect people.quire ${want#*:} | head -1)
  if [[ $loaded != *"(loaded by ${want%%:*})"* ]]; then
    echo "FAIL: inspect ${want#*:} printed '$loaded'"
    failures=$((failures + 1))
  fi
done
# convert reads what core's rule (quire::detect_input) says the input is, not what its name says.
cp people.csv people-csv.json
cp people.csv people
printf '{"id":1,"name":"a"}\n{"id":2,"name":"b"}\n' > people.txt
printf '{\n  "resourceType": "Patient",\n  "id": "p1"\n}\n' > patient.json
expect 0 "CSV in a file named .json" -- convert people-csv.json from-json.quire
expect 0 "CSV in a file with no extension" -- convert people from-bare.quire
expect 0 "NDJSON in a file named .txt" -- convert people.txt from-txt.quire
printf 'id;name\n1;a\n2;b\n' > people-semicolons.csv
expect 0 "CSV with ';' between its fields" -- convert people-semicolons.csv from-semicolons.quire
for f in from-json from-bare from-txt from-semicolons; do
  rows=$("$quire" query $f.quire --where "id = 2" --csv)
  if [[ $rows != $'id,name\n2,b' ]]; then
    echo "FAIL: convert then query of $f.quire printed '$rows'"
    failures=$((failures + 1))
  fi
done
expect 2 "one FHIR JSON document" -- convert patient.json patient.quire
line "quire convert: patient.json: detected fhir (a JSON object (a FHIR resource or Bundle)); convert reads CSV or NDJSON: if it is one, say which with --from csv or --from ndjson" "the kind detected, and --from"
expect 1 "--from ndjson overrides what was detected" -- convert people-csv.json forced.quire --from ndjson
expect 2 "--from takes csv or ndjson" -- convert people.csv forced.quire --from fhir
printf '' > empty.csv
expect 1 "an empty input" -- convert empty.csv empty.quire
line "empty.csv: EMPTY_INPUT: the input is empty: nothing to convert" "an empty input's line"

# FHIR XML: `fhir validate` and `fhir format` take XML by its first byte; `format --to xml` writes it.
printf '<Patient xmlns="http://hl7.org/fhir">\n  <id value="p1"/>\n  <birthDate value="1974-13-45"/>\n</Patient>\n' > bad-date.xml
printf '<Patient xmlns="http://hl7.org/fhir"><id value="p1"/><active value="true"/></Patient>' > patient.xml
printf '<!DOCTYPE Patient [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n<Patient xmlns="http://hl7.org/fhir"/>' > xxe.xml
expect 1 "an XML resource with an invalid date" -- fhir validate bad-date.xml
out=$("$quire" fhir validate bad-date.xml 2>/dev/null)
if ! grep -q '^bad-date.xml:3:3: error \[value\] Patient.birthDate: ' <<<"$out"; then
  echo "FAIL: XML issues at XML lines and columns: $out"
  failures=$((failures + 1))
fi
expect 1 "a DOCTYPE is refused" -- fhir validate xxe.xml
expect 1 "a DOCTYPE is refused by format" -- fhir format xxe.xml
line "xxe.xml: INVALID_XML at offset 0, line 1, column 1: a DOCTYPE is refused (FHIR XML has none; entities are never expanded)" "INVALID_XML with its place"
expect 0 "format reads XML" -- fhir format patient.xml --compact
out=$("$quire" fhir format patient.xml --compact)
if [[ $out != '{"resourceType":"Patient","id":"p1","active":true}' ]]; then
  echo "FAIL: XML to canonical JSON: $out"
  failures=$((failures + 1))
fi
"$quire" fhir format patient.json --to xml --compact --output back.xml
out=$("$quire" fhir format back.xml --compact)
if [[ $(cat back.xml) != '<Patient xmlns="http://hl7.org/fhir"><id value="p1"/></Patient>' || $out != '{"resourceType":"Patient","id":"p1"}' ]]; then
  echo "FAIL: JSON to XML and back: $(cat back.xml) / $out"
  failures=$((failures + 1))
fi
expect 2 "--to takes json or xml" -- fhir format patient.json --to yaml

if ((failures)); then
  echo "$failures failed"
  exit 1
fi
echo "all passed"
