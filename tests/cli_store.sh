#!/usr/bin/env bash
# Growing and sealed .quire files on the command line (ctest cli_store, native only): keygen,
# convert --store/--owner-key/--partition-by/--keys-dir, each key reading what it may (and the
# exit codes of a missing, wrong or malformed key), append (a new partition's key made), delete,
# update, compact, key rotation, re-sealing, inspect --storage; no plaintext in a sealed file; a writer's lock;
# and appends killed with SIGKILL at random moments, after which the file opens at a whole commit.
#   tests/cli_store.sh path/to/quire
set -uo pipefail
quire=$(realpath "${1:?usage: cli_store.sh path/to/quire}") || exit 1
here=$(cd "$(dirname "$0")" && pwd) || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

# shellcheck source=cli_lib.sh
source "$here/cli_lib.sh"
# stdout of the last run is FILE's: expect TEXT.
says() {
  local got
  got=$(cat out.txt)
  [[ $got == "$1" ]] || fail "$2: printed '$got', expected '$1'"
}

awk 'BEGIN { split("north south east", c, " ");
  for (i = 0; i < 600; i++) printf "{\"id\":%d,\"clinic\":\"%s\",\"name\":\"Okafor-%d\",\"balance\":\"%d.50\"}\n", i, c[i % 3 + 1], i, i }' >a.ndjson
awk 'BEGIN { for (i = 600; i < 630; i++) printf "{\"id\":%d,\"clinic\":\"west\",\"name\":\"Mensah-%d\",\"balance\":\"1.00\"}\n", i, i }' >b.ndjson

run 0 "keygen" -- keygen owner.key
[[ $(stat -c %s owner.key) == 32 && $(stat -c %a owner.key) == 600 ]] || fail "a key file is 32 bytes, mode 0600"
run 1 "keygen refuses a file that exists" -- keygen owner.key
run 0 "convert sealed, partitioned" -- convert a.ndjson s.quire --partition-by clinic --owner-key owner.key --keys-dir keys
for c in north south east; do [[ -f keys/$c.key ]] || fail "no keys/$c.key"; done
if grep -q -e Okafor -e north -e balance s.quire; then fail "plaintext in the sealed file"; fi

run 2 "query without a key" -- query s.quire --count
has "KEY_REQUIRED" "no key"
run 0 "the owner counts everything" -- query s.quire --key owner.key --count
says 600 "owner count"
run 0 "a partition's key counts its own" -- query s.quire --key keys/north.key --count
says 200 "north count"
run 0 "a partition's key sees no other clinic" -- query s.quire --key keys/east.key --where "clinic != 'east'" --count
says 0 "east sees only east"
run 0 "keygen another" -- keygen other.key
run 2 "a wrong key" -- query s.quire --key other.key --count
has "WRONG_KEY" "wrong key"
head -c 31 owner.key >short.key
run 2 "a key file of the wrong size" -- query s.quire --key short.key --count
has "holds 31" "short key"
: >empty.txt
run 2 "an empty passphrase file" -- query s.quire --passphrase-file empty.txt --count
has "holds no passphrase" "empty passphrase"

run 0 "append a new partition" -- append s.quire b.ndjson --key owner.key --keys-dir keys
[[ -f keys/west.key ]] || fail "append made no keys/west.key"
run 0 "the new partition's key" -- query s.quire --key keys/west.key --count
says 30 "west count"
run 2 "a partition's key cannot append" -- append s.quire b.ndjson --key keys/west.key --keys-dir keys
has "KEY_REQUIRED" "append needs the owner"

run 0 "delete" -- delete s.quire --where "id < 100" --key owner.key
run 0 "update" -- update s.quire --where "id = 150" --set name=Renamed --key owner.key
run 0 "after delete and update" -- query s.quire --key owner.key --count
says 530 "count after delete"
run 0 "the updated row" -- query s.quire --key owner.key --find id=150 --columns name
says '{"name":"Renamed"}' "updated row"
run 0 "storage report" -- inspect s.quire --storage --key owner.key
grep -q '"compactionPays":true' out.txt || fail "storage report: compaction should pay after deletes"
grep -q '"columns":\[{"name":"id","dataBytes":[0-9]*,"directoryBytes":[0-9]*},' out.txt || fail "storage report: no bytes by column"
grep -q '"maxSegmentsPerPartition":[0-9]' out.txt || fail "storage report: no segments a partition's query touches"
run 0 "inspect with a partition's key" -- inspect s.quire --json --key keys/north.key
grep -q '"partitionBy":"clinic","partitions":4,"partitionsRead":1,' out.txt || fail "a partition's key: partitionBy and partitions: $(cat out.txt)"
grep -q '"partitionKey":true}$' out.txt || fail "a partition's key: partitionKey"
before=$(stat -c %s s.quire)
run 0 "compact" -- compact s.quire --key owner.key
(($(stat -c %s s.quire) < before)) || fail "compaction did not shrink the file"
run 0 "after compaction" -- query s.quire --key keys/south.key --count
says 167 "south after compaction"

run 0 "keygen new owner" -- keygen new.key
run 0 "rotate the owner's key" -- keys rotate s.quire --key owner.key --new-key new.key
run 2 "the old owner key" -- query s.quire --key owner.key --count
run 0 "the new owner key" -- query s.quire --key new.key --count
says 530 "count with the new key"
run 0 "a partition key after rotation" -- query s.quire --key keys/north.key --count
says 166 "north after rotation"

cp keys/east.key east.old
run 0 "rotate one partition's key" -- keys rotate s.quire --key new.key --partition east --keys-dir keys
cmp -s keys/east.key east.old && fail "the partition's key file did not change"
run 2 "the partition's old key" -- query s.quire --key east.old --count
run 0 "the partition's new key" -- query s.quire --key keys/east.key --count
says 167 "east after its key's rotation"

# Re-sealing: every page under new data keys (the old file replaced), the same rows for every key.
run 0 "rows before re-sealing" -- query s.quire --key new.key --order id --csv
cp out.txt rows.before
cp s.quire s.before
run 2 "re-sealing a partitioned file needs its keys folder" -- keys rotate s.quire --key new.key --reseal
has "keys folder" "reseal without keys"
cmp -s s.quire s.before || fail "a refused re-seal changed the file"
run 0 "re-seal every partition" -- keys rotate s.quire --key new.key --reseal --keys-dir keys
grep -qF "re-sealed under new data keys, 530 rows in 4 segments" out.txt || fail "reseal message: $(cat out.txt)"
cmp -s s.quire s.before && fail "re-sealing left the file as it was"
ls s.quire.reseal-* >/dev/null 2>&1 && fail "re-sealing left its temporary file"
run 0 "rows after re-sealing" -- query s.quire --key new.key --order id --csv
cmp -s out.txt rows.before || fail "re-sealing changed the rows"
run 0 "a partition key after re-sealing" -- query s.quire --key keys/east.key --count
says 167 "east after re-sealing"
run 0 "re-seal one partition" -- keys rotate s.quire --key new.key --reseal --partition south --keys-dir keys
grep -qF "re-sealed under new data keys, 167 rows in 1 segments" out.txt || fail "reseal one partition: $(cat out.txt)"
run 0 "south after its re-seal" -- query s.quire --key keys/south.key --count
says 167 "south after its re-seal"
run 2 "re-seal a partition the file does not hold" -- keys rotate s.quire --key new.key --reseal --partition nowhere --keys-dir keys
has "no partition" "reseal of an unknown partition"
run 2 "re-seal with a partition's key" -- keys rotate s.quire --key keys/north.key --reseal --keys-dir keys
has "KEY_REQUIRED" "reseal needs the owner"

run 0 "a passphrase-sealed file" -- convert a.ndjson p.quire --passphrase-file <(printf 'open sesame\n')
run 0 "opened by its passphrase" -- query p.quire --passphrase-file <(printf 'open sesame') --count
says 600 "passphrase count"
run 2 "a wrong passphrase" -- query p.quire --passphrase-file <(printf 'open says me') --count

# A writer holds the file's lock: another writer is refused, not interleaved.
run 0 "a plain growing file" -- convert a.ndjson g.quire --store
flock g.quire sleep 3 &
locker=$!
sleep 0.5
run 1 "a second writer" -- append g.quire b.ndjson
has "being written by another process" "the lock"
wait "$locker"

# SIGKILL during appends: the file always opens at a whole commit, and the next append goes on.
awk 'BEGIN { for (i = 0; i < 150000; i++) printf "{\"id\":%d,\"clinic\":\"k%d\",\"name\":\"row %d of many, padded to be long enough\",\"balance\":\"%d.25\"}\n", i, i % 7, i, i }' >big.ndjson
run 0 "the file to kill writers of" -- convert a.ndjson k.quire --store --partition-by clinic
commits=0
for delay in 0.05 0.1 0.15 0.2 0.3 0.4 0.5 0.7 0.9 1.2; do
  "$quire" append k.quire big.ndjson --quiet >/dev/null 2>&1 &
  pid=$!
  sleep "$delay"
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  n=$("$quire" query k.quire --count 2>err.txt) || fail "after a kill at ${delay}s the file does not open: $(cat err.txt)"
  (((n - 600) % 150000 == 0)) || fail "after a kill at ${delay}s: $n rows, not 600 + a multiple of 150000"
done
run 0 "an append after the kills" -- append k.quire b.ndjson --quiet
run 0 "count after the kills" -- query k.quire --count
n=$(cat out.txt)
(((n - 630) % 150000 == 0)) || fail "after the kills and an append: $n rows"
echo "ok: killed appends left whole commits ($(((n - 630) / 150000)) of 10 finished before their kill)"

if ((failures)); then
  echo "cli_store: $failures failures"
  exit 1
fi
echo "cli_store: all passed"
