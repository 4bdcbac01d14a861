#!/usr/bin/env bash
# `quire listen` over TLS (ctest cli_listen_tls, native only). Certificates are made here with
# `openssl`: a CA, a server certificate for 127.0.0.1 and a client certificate it signed, one it
# signed over 32 kB long, and a client certificate from a second, unrelated CA. The clients are
# Debian's Python `ssl` module. Cases: TLS ACKs and rows; TLS 1.2 served and 1.1 refused; 3,000
# pipelined messages under back-pressure; a plain TCP peer on the TLS port; a peer that never
# starts its handshake and one that stops half way (closed at --tls-handshake-timeout-ms, logged);
# a record forged after the handshake (closed, logged); 200 idle TLS connections (the listener's
# memory read); mutual TLS (--tls-ca): the good certificate served, no certificate, the other CA's
# and the over-long one refused with the peer's address logged, nothing of theirs stored, a good
# client served beside them; 300 handshakes left half way (memory read, closed at the timeout, a
# good client served); --allow before the handshake; the usage and start errors.
#   tests/cli_listen_tls.sh path/to/quire
set -uo pipefail
quire=$(realpath "${1:?usage: cli_listen_tls.sh path/to/quire}") || exit 1
here=$(cd "$(dirname "$0")" && pwd) || exit 1
export QUIRE_TESTS_DIR=$here  # client.py imports mllp_test_client.py from here
py=/usr/bin/python3
if ! command -v openssl >/dev/null || ! "$py" -c 'import ssl' 2>/dev/null; then
  echo "SKIP: needs the openssl tool and Python's ssl module (scripts/bootstrap installs openssl)"
  exit 77
fi
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work" || exit 1

# shellcheck source=cli_lib.sh
source "$here/cli_lib.sh"

# --- certificates ---------------------------------------------------------------------------------
ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
# make_ca NAME: NAME.pem and NAME.key, self-signed.
make_ca() { openssl req -x509 "${ec[@]}" -keyout "$1.key" -out "$1.pem" -days 2 -subj "/CN=$1" 2>/dev/null; }
# make_cert NAME CA SUBJECT EXTENSIONS: NAME.pem and NAME.key signed by CA.
make_cert() {
  openssl req "${ec[@]}" -keyout "$1.key" -out "$1.csr" -subj "$3" 2>/dev/null &&
    printf '%b' "$4" >"$1.ext" &&
    openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -out "$1.pem" -days 2 \
      -extfile "$1.ext" 2>/dev/null
}
make_ca ca && make_ca other-ca &&
  make_cert server ca "/CN=127.0.0.1" 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' &&
  make_cert client ca "/O=quire test/CN=good client" 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n' &&
  make_cert stranger other-ca "/CN=stranger" 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n' ||
  {
    echo "FAIL: openssl could not make the test certificates"
    exit 1
  }
# A client certificate from the right CA, 40 kB of names long: past the listener's 32 kB bound.
make_cert huge ca "/CN=huge client" \
  "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\nsubjectAltName=$(for i in $(seq 1 1800); do printf 'DNS:n%04d.example.org,' "$i"; done)DNS:last.example.org\n" ||
  {
    echo "FAIL: openssl could not make the long certificate"
    exit 1
  }
openssl pkey -in client.key -aes256 -passout pass:secret -out locked.key 2>/dev/null

cat >client.py <<'EOF'
# The test's TLS MLLP client. Every mode prints "local PORT" (its own port, as the listener logs
# it) first. ACKs print as "CODE CONTROL_ID"; an error as "error TEXT".
import os, socket, ssl, sys, time, warnings

sys.path.insert(0, os.environ["QUIRE_TESTS_DIR"])
from mllp_test_client import CR, FS, VT, frame, message, read_acks  # noqa: E402


def read_acks_printing(sock, want, timeout):
    return read_acks(sock, want, timeout, on_error=lambda e: print("error", e))

def tcp(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    print("local", s.getsockname()[1], flush=True)
    return s

def tls(port, cert=None):
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile="ca.pem")
    pin = os.environ.get("TLS_VERSION")  # "1.1" or "1.2": the only version the client offers
    if pin:
        warnings.simplefilter("ignore", DeprecationWarning)
        ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
        v = ssl.TLSVersion.TLSv1_1 if pin == "1.1" else ssl.TLSVersion.TLSv1_2
        ctx.minimum_version = ctx.maximum_version = v
    if cert:
        ctx.load_cert_chain(cert + ".pem", cert + ".key")
    return ctx.wrap_socket(tcp(port), server_hostname="127.0.0.1")

mode, port = sys.argv[1], int(sys.argv[2])
if mode == "send":  # send PORT PREFIX N [CERT]: N messages pipelined, then their ACKs
    prefix, n = sys.argv[3], int(sys.argv[4])
    try:
        s = tls(port, sys.argv[5] if len(sys.argv) > 5 else None)
        s.sendall(b"".join(frame(message("%s%d" % (prefix, i))) for i in range(n)))
        for code, cid in read_acks_printing(s, n, 5.0):
            print(code, cid)
    except OSError as e:
        print("error", e)
elif mode == "plain":  # plain PORT: an MLLP frame over plain TCP; prints what came back
    s = tcp(port)
    s.sendall(frame(message("PLAIN0")))
    s.settimeout(5)
    got = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            got += d
    except OSError as e:
        print("error", e)
    print("received", len(got), "bytes", "with an ACK" if b"MSA|" in got else "no ACK")
elif mode == "stall":  # stall PORT [HEX]: sends HEX (or nothing), then waits to be closed
    s = tcp(port)
    if len(sys.argv) > 3:
        s.sendall(bytes.fromhex(sys.argv[3]))
    s.settimeout(10)
    start = time.time()
    try:
        while s.recv(65536):
            pass
    except OSError as e:
        print("error", e)
    print("closed after %.2f s" % (time.time() - start))
elif mode == "forge":  # forge PORT: after the handshake, a record TLS did not seal (raw on the socket)
    s = tls(port)
    os.write(s.fileno(), b"\x17\x03\x03\x00\x20" + b"\x0bMSH|^~\\&|FORGED|F|||2026||ADT^A01|F0|P" + b"\x1c\r")
    s.settimeout(5)
    try:
        while s.recv(65536):
            pass
        print("closed")
    except OSError as e:
        print("error", e)
elif mode == "halfway":  # halfway PORT N SECONDS: N handshakes sent a ClientHello and stopped; how many the listener closes
    n, secs = int(sys.argv[3]), float(sys.argv[4])
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile="ca.pem")
    socks = []
    for i in range(n):
        # The ClientHello is made in memory and sent raw; the server's answer is read raw and
        # thrown away, so the handshake never goes on.
        incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        hs = ctx.wrap_bio(incoming, outgoing, server_hostname="127.0.0.1")
        try:
            hs.do_handshake()
        except ssl.SSLWantReadError:
            pass
        raw = socket.create_connection(("127.0.0.1", port), timeout=5)
        raw.sendall(outgoing.read())
        socks.append(raw)
    print("open", len(socks), flush=True)
    start, closed = time.time(), set()
    while len(closed) < n and time.time() < start + secs:
        for i, raw in enumerate(socks):
            if i in closed:
                continue
            try:
                if not raw.recv(65536, socket.MSG_DONTWAIT):
                    closed.add(i)
            except BlockingIOError:
                pass
            except OSError:
                closed.add(i)
        time.sleep(0.05)
    print("closed %d" % len(closed), flush=True)
elif mode == "idle":  # idle PORT N SECONDS: N TLS connections, handshakes done, then nothing
    n, secs = int(sys.argv[3]), float(sys.argv[4])
    socks = []
    for i in range(n):
        try:
            socks.append(tls(port))
        except OSError as e:
            print("error", e)
            break
    print("open", len(socks), flush=True)
    time.sleep(secs)
EOF

# start_listener and stop_listener: cli_lib.sh.
local_port() { sed -n 's/^local //p' "$1"; }
count() { "$quire" query "$1" --where "control_id startsWith '$2'" --count 2>/dev/null; }
tls_args=(--tls-cert server.pem --tls-key server.key)

# --- TLS, server certificate only -----------------------------------------------------------------
start_listener t.log --port 0 --store t.quire --group-ms 5 "${tls_args[@]}" --tls-handshake-timeout-ms 400 \
  --idle-timeout-ms 20000 --group-max 50 --max-queued-bytes 65536 || exit 1
grep -q "TLS with server.pem" t.log || fail "the start is logged with the certificate: $(cat t.log)"
"$py" client.py send "$port" T 3 >acks.txt
[[ $(grep -v '^local' acks.txt | tr '\n' ' ') == "AA T0 AA T1 AA T2 " ]] ||
  fail "3 messages over TLS, 3 AA with MSA-2 the control id: $(tr '\n' ' ' <acks.txt)"
echo "ok: 3 AA over TLS"
# TLS 1.2 is served; a client offering only TLS 1.1 is refused and logged.
TLS_VERSION=1.2 "$py" client.py send "$port" V12_ 2 >acks.txt
[[ $(grep -c '^AA V12_' acks.txt) == 2 ]] || fail "a TLS 1.2 client: 2 AA: $(tr '\n' ' ' <acks.txt)"
TLS_VERSION=1.1 "$py" client.py send "$port" V11_ 1 >v11.txt
grep -q '^A[AER] ' v11.txt && fail "a TLS 1.1 client gets no ACK: $(cat v11.txt)"
grep -q "refused 127.0.0.1:$(local_port v11.txt): TLS handshake failed: unsupported protocol" t.log ||
  fail "a TLS 1.1 client is refused and logged: $(tail -3 t.log)"
echo "ok: TLS 1.2 served, TLS 1.1 refused"
# 3,000 messages pipelined (~600 kB) against a 64 kB per-connection bound and groups of 50: the
# listener stops and resumes reading the TLS connection; every message AA, in order.
"$py" client.py send "$port" BULK 3000 >acks.txt
[[ $(grep -v '^local' acks.txt | awk '{print $1 $2}' | tr '\n' ' ') == "$(for i in $(seq 0 2999); do printf 'AABULK%d ' "$i"; done)" ]] ||
  fail "3,000 pipelined over TLS under back-pressure: all AA, in order: $(grep -c '^AA' acks.txt) AA"
echo "ok: 3,000 pipelined over TLS under back-pressure"

# A plain TCP peer sending an MLLP frame to the TLS port, a peer that never sends a handshake
# byte and one that stops half way through its ClientHello, while a good client is served.
"$py" client.py plain "$port" >plain.txt &
plain=$!
pids+=($!)
"$py" client.py stall "$port" >silent.txt &
silent=$!
pids+=($!)
"$py" client.py stall "$port" 160301020001 >half.txt &
half=$!
pids+=($!)
sleep 0.1
"$py" client.py send "$port" BESIDE 50 >acks.txt
[[ $(grep -c '^AA BESIDE' acks.txt) == 50 ]] || fail "a good TLS client is served beside them: $(grep -vc '^local' acks.txt) ACKs"
wait "$plain" "$silent" "$half"
grep -q "no ACK" plain.txt || fail "a plain TCP peer gets no ACK: $(cat plain.txt)"
grep -q "refused 127.0.0.1:$(local_port plain.txt): TLS handshake failed: " t.log ||
  fail "the plain peer's refusal is logged with its address: $(cat t.log)"
for f in silent.txt half.txt; do
  secs=$(sed -n 's/^closed after \([0-9.]*\) s$/\1/p' $f)
  [[ -n $secs ]] && awk -v s="$secs" 'BEGIN { exit !(s >= 0.3 && s < 3) }' ||
    fail "$f: a stalled handshake is closed after --tls-handshake-timeout-ms 400: $(cat $f)"
  grep -q "refused 127.0.0.1:$(local_port $f): no TLS handshake within --tls-handshake-timeout-ms 400" t.log ||
    fail "$f: the handshake timeout is logged with the address: $(cat t.log)"
done
# A record forged on the socket after the handshake: the connection is closed and logged.
"$py" client.py forge "$port" >forge.txt
grep -q "closed 127.0.0.1:$(local_port forge.txt): TLS read failed: " t.log ||
  fail "a forged TLS record closes the connection, logged: $(cat forge.txt; tail -3 t.log)"
echo "ok: plain peer refused, stalled handshakes closed after $(sed -n 's/^closed after //p' silent.txt), $(sed -n 's/^closed after //p' half.txt)"

# 200 idle TLS connections (handshakes done): the listener's memory, and a client served beside.
rss0=$(awk '/VmRSS/ {print $2}' "/proc/$lpid/status")
"$py" client.py idle "$port" 200 3 >idle.txt &
idle=$!
pids+=($!)
for _ in $(seq 1 100); do grep -q '^open' idle.txt 2>/dev/null && break; sleep 0.05; done
sleep 0.3
rss1=$(awk '/VmRSS/ {print $2}' "/proc/$lpid/status")
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$lpid/status")
[[ $(sed -n 's/^open //p' idle.txt) == 200 ]] || fail "200 idle TLS connections open: $(grep -v '^local' idle.txt | head -3)"
"$py" client.py send "$port" IDLE 20 >acks.txt
[[ $(grep -c '^AA IDLE' acks.txt) == 20 ]] || fail "a client is served beside 200 idle TLS connections"
echo "listener VmRSS ${rss0} kB before, ${rss1} kB with 200 idle TLS connections ($(((rss1 - rss0) * 1024 / 200)) bytes each), peak ${hwm} kB"
if ! nm "$quire" 2>/dev/null | grep " __asan_init" >/dev/null; then
  [[ $hwm -lt 100000 ]] || fail "peak RSS with 200 idle TLS connections stays under 100 MB (got ${hwm} kB)"
fi
wait "$idle"
stop_listener
[[ $stopped == 0 ]] || fail "SIGTERM exits 0 (got $stopped)"
"$quire" query t.quire --where "control_id startsWith 'T'" --columns control_id,type,patient_id,ack_code --csv >rows.csv
printf 'control_id,type,patient_id,ack_code\nT0,ADT^A01^ADT_A01,PAT-T0,AA\nT1,ADT^A01^ADT_A01,PAT-T1,AA\nT2,ADT^A01^ADT_A01,PAT-T2,AA\n' >want.csv
same rows.csv want.csv "the 3 TLS messages are the store's rows"
[[ $(count t.quire PLAIN) == 0 && $(count t.quire F) == 0 && $(count t.quire V11_) == 0 ]] || fail "nothing of the plain or forging peer is stored"
[[ $(count t.quire BESIDE) == 50 && $(count t.quire IDLE) == 20 && $(count t.quire BULK) == 3000 ]] ||
  fail "the good clients' rows are stored"
echo "ok: rows over TLS"

# --- mutual TLS -----------------------------------------------------------------------------------
start_listener m.log --port 0 --store m.quire --group-ms 5 "${tls_args[@]}" --tls-ca ca.pem \
  --tls-handshake-timeout-ms 1500 || exit 1
grep -q "client certificates required (CA ca.pem)" m.log || fail "mutual TLS is logged at start: $(cat m.log)"
"$py" client.py send "$port" GOOD 3 client >acks.txt
[[ $(grep -c '^AA GOOD' acks.txt) == 3 ]] || fail "the CA's client certificate: 3 AA: $(tr '\n' ' ' <acks.txt)"
grep -q "accepted 127.0.0.1:$(local_port acks.txt): TLSv1.[23], client certificate CN=good client,O=quire test" m.log ||
  fail "the verified client's subject is logged at connect: $(cat m.log)"
"$py" client.py send "$port" NOCERT 3 >nocert.txt
grep -q '^A[AER] ' nocert.txt && fail "a client without a certificate gets no ACK: $(cat nocert.txt)"
grep -q "refused 127.0.0.1:$(local_port nocert.txt): TLS handshake failed: peer did not return a certificate" m.log ||
  fail "a client without a certificate is refused and logged with its address: $(cat m.log)"
"$py" client.py send "$port" OTHER 3 stranger >other.txt
grep -q '^A[AER] ' other.txt && fail "a certificate from another CA gets no ACK: $(cat other.txt)"
grep -q "refused 127.0.0.1:$(local_port other.txt): TLS handshake failed: client certificate refused: unable to get local issuer certificate" m.log ||
  fail "a certificate from another CA is refused and logged with its address and the verify error: $(cat m.log)"
# A certificate chain over the listener's 32 kB bound (signed by the CA): refused before it is
# checked, and logged.
"$py" client.py send "$port" HUGE 1 huge >huge.txt
grep -q '^A[AER] ' huge.txt && fail "a client certificate over 32 kB gets no ACK: $(cat huge.txt)"
grep -q "refused 127.0.0.1:$(local_port huge.txt): TLS handshake failed: excessive message size" m.log ||
  fail "a client certificate over 32 kB is refused and logged: $(tail -2 m.log)"
# Refused clients in a loop while a good client sends: it is served all the same.
(
  for i in $(seq 1 15); do
    "$py" client.py send "$port" NOCERT 2 >/dev/null
    "$py" client.py send "$port" OTHER 2 stranger >/dev/null
  done
) &
bad=$!
pids+=($!)
"$py" client.py send "$port" BUSY 100 client >acks.txt
[[ $(grep -c '^AA BUSY' acks.txt) == 100 ]] || fail "a good client is served while others are refused: $(grep -c '^AA' acks.txt) AA"
wait "$bad"
# 300 handshakes left half way (the server's flight sent, the client's never comes): each holds
# OpenSSL's handshake state until the timeout; a good client is served meanwhile.
rss0=$(awk '/VmRSS/ {print $2}' "/proc/$lpid/status")
"$py" client.py halfway "$port" 300 5 >halfway.txt &
halfway=$!
pids+=($!)
for _ in $(seq 1 100); do grep -q '^open' halfway.txt 2>/dev/null && break; sleep 0.05; done
sleep 0.2
rss1=$(awk '/VmRSS/ {print $2}' "/proc/$lpid/status")
"$py" client.py send "$port" HALF 20 client >acks.txt
[[ $(grep -c '^AA HALF' acks.txt) == 20 ]] || fail "a good client is served beside 300 half-done handshakes"
wait "$halfway"
[[ $(sed -n 's/^closed //p' halfway.txt) == 300 ]] || fail "300 half-done handshakes closed at the timeout: $(tr '\n' ' ' <halfway.txt)"
[[ $(grep -c "no TLS handshake within --tls-handshake-timeout-ms 1500" m.log) == 300 ]] ||
  fail "each handshake timeout is logged"
echo "ok: 300 half-done handshakes closed at the timeout; VmRSS ${rss0} kB before, ${rss1} kB with them ($(((rss1 - rss0) * 1024 / 300)) bytes each)"
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$lpid/status")
echo "listener peak RSS ${hwm} kB after 33 refused and 300 timed-out handshakes"
if ! nm "$quire" 2>/dev/null | grep " __asan_init" >/dev/null; then
  [[ $hwm -lt 100000 ]] || fail "peak RSS with refused handshakes stays under 100 MB (got ${hwm} kB)"
fi
stop_listener
refusals=$(grep -c "refused 127.0.0.1:[0-9]*: TLS handshake failed" m.log)
[[ $refusals -ge 33 ]] || fail "every refused handshake is logged: $refusals of 33"
[[ $(count m.quire GOOD) == 3 && $(count m.quire BUSY) == 100 && $(count m.quire HALF) == 20 ]] || fail "the good client's rows are stored"
[[ $(count m.quire NOCERT) == 0 && $(count m.quire OTHER) == 0 && $(count m.quire HUGE) == 0 ]] || fail "nothing of a refused client is stored"
echo "ok: mutual TLS, $refusals refusals logged"

# --allow still refuses before any byte, TLS or not.
start_listener a.log --port 0 --store a.quire "${tls_args[@]}" --allow 10.0.0.0/8 || exit 1
"$py" client.py send "$port" OUT 1 >r.txt
stop_listener
grep -q '^A[AER] ' r.txt && fail "a peer outside --allow gets no ACK"
grep -q "refused 127.0.0.1:[0-9]*: not in --allow" a.log || fail "--allow refuses before the handshake: $(cat a.log)"
grep -q "TLS handshake" a.log && fail "no handshake is tried with a peer outside --allow: $(cat a.log)"

# --- usage and start errors -----------------------------------------------------------------------
run 2 "--tls-cert needs --tls-key" -- listen --port 0 --store u.quire --tls-cert server.pem
has "--tls-cert and --tls-key go together" "--tls-cert alone"
run 2 "--tls-key needs --tls-cert" -- listen --port 0 --store u.quire --tls-key server.key
has "--tls-cert and --tls-key go together" "--tls-key alone"
run 2 "--tls-ca needs both" -- listen --port 0 --store u.quire --tls-ca ca.pem
has "--tls-ca needs --tls-cert and --tls-key" "--tls-ca alone"
run 2 "--tls-ca with --tls-cert alone" -- listen --port 0 --store u.quire --tls-cert server.pem --tls-ca ca.pem
run 2 "the handshake timeout needs TLS" -- listen --port 0 --store u.quire --tls-handshake-timeout-ms 100
run 2 "a zero handshake timeout" -- listen --port 0 --store u.quire "${tls_args[@]}" --tls-handshake-timeout-ms 0
run 1 "a certificate file that is not there" -- listen --port 0 --store u.quire --tls-cert nope.pem --tls-key server.key
has "nope.pem: FILE_NOT_FOUND" "the missing certificate is named"
run 2 "a certificate file that holds no certificate" -- listen --port 0 --store u.quire --tls-cert server.key --tls-key server.key
has "server.key: INVALID_ARGUMENT" "the file that is not a certificate is named"
has "not a PEM certificate" "the file that is not a certificate"
run 2 "a key not matching the certificate" -- listen --port 0 --store u.quire --tls-cert server.pem --tls-key client.key
has "client.key: INVALID_ARGUMENT" "the key that does not match is named"
has "does not match the certificate server.pem" "the key that does not match"
run 2 "a key with a passphrase is refused, not asked for" -- listen --port 0 --store u.quire --tls-cert client.pem --tls-key locked.key
has "locked.key: INVALID_ARGUMENT" "the locked key is named"
run 2 "a CA file with no certificate" -- listen --port 0 --store u.quire "${tls_args[@]}" --tls-ca server.key
has "server.key: INVALID_ARGUMENT" "the bad CA file is named"
[[ -e u.quire ]] && fail "no store is created when the TLS options are refused"

if ((failures > 0)); then
  echo "$failures failure(s)"
  exit 1
fi
echo "cli_listen_tls: all passed"
