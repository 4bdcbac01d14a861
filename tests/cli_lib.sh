# The CLI scripts' shared helpers (sourced by cli_view.sh, cli_dataset.sh, cli_listen.sh and
# cli_listen_tls.sh): `quire` is the binary under test; each helper counts a failure in `failures`
# and goes on.
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
# start_listener LOG ARGS...: starts `quire listen ARGS...` in the background (stdout in
# listen.out, stderr appended to LOG); sets lpid (also added to the caller's pids) and port.
start_listener() {
  local log=$1
  shift
  # Emptied here, not by the redirection below: that one runs in the child, after this function
  # may already have read the last listener's "listening on" line (seen under load).
  : >listen.out
  "$quire" listen "$@" >>listen.out 2>>"$log" &
  lpid=$!
  pids+=("$lpid")
  port=""
  for _ in $(seq 1 200); do
    port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' listen.out 2>/dev/null)
    [[ -n $port ]] && return 0
    kill -0 "$lpid" 2>/dev/null || break
    sleep 0.02
  done
  fail "the listener did not start: $(cat "$log")"
  return 1
}
# stop_listener: SIGTERM to the last listener started; its exit status in `stopped`.
stop_listener() {
  kill -TERM "$lpid" 2>/dev/null
  wait "$lpid"
  stopped=$?
}
