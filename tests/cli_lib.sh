# The CLI scripts' shared helpers (sourced by cli_view.sh and cli_dataset.sh): `quire` is the
# binary under test; each helper counts a failure in `failures` and goes on.
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
# run WANT DESCRIPTION -- ARGS...: runs quire, keeps stdout in out.txt and stderr in $err.
run() {
  local want=$1 what=$2
  shift 3
  "$quire" "$@" >out.txt 2>err.txt
  local got=$?
  err=$(cat err.txt)
  if [[ $got != "$want" ]]; then
    fail "$what: quire $* exited $got, expected $want"
    sed 's/^/  stderr: /' err.txt
  else
    echo "ok: $what (exit $got)"
  fi
}
# same FILE GOLDEN DESCRIPTION: byte-for-byte equal.
same() {
  if ! cmp -s "$1" "$2"; then
    fail "$3: $1 differs from $2"
    diff <(cat -A "$2") <(cat -A "$1") | head -20 | sed 's/^/  /'
  fi
}
# has TEXT DESCRIPTION: the last command's stderr contains TEXT.
has() {
  if ! grep -qF -- "$1" <<<"$err"; then
    fail "$2: stderr lacks '$1':"
    echo "$err" | sed 's/^/  stderr: /'
  fi
}
