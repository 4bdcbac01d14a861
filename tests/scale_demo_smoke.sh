#!/usr/bin/env bash
# The short version of `make scale-demo` (ctest scale_demo_smoke, native only): an 8 MiB export,
# 2 Dask workers over loopback, 6 tasks each writing its byte range into one dataset, merged; the
# dataset must hold the rows one process writes (count and digest). Needs Debian's
# python3-distributed (scripts/bootstrap installs it) and node for the generator.
#   tests/scale_demo_smoke.sh path/to/quire
set -euo pipefail
quire=$(realpath "${1:?usage: scale_demo_smoke.sh path/to/quire}")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
node "$here/gen_patients.mjs" "$work/export.ndjson" 8 7
/usr/bin/python3 "$here/../scripts/scale_demo.py" --quire "$quire" --export "$work/export.ndjson" \
  --view "$here/data/view_output/patient_view.json" --partition-by gender --workers 2 --tasks 6 \
  --work "$work/run" --out "$work/reading.json" >/dev/null
grep -q '"same": true' "$work/reading.json"
grep -q '"tasks": 6' "$work/reading.json"
echo "scale_demo_smoke: the Dask dataset holds the one-process rows"
