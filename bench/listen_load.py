#!/usr/bin/python3
# An open-loop MLLP load driver for `quire listen` (docs/listen.md, "Measured"): each connection
# sends ADT^A01 messages at a fixed rate whatever the ACKs do (a message is due at t0 + i/rate and
# is sent as soon as it is due), and each ACK's latency is measured from its message's due time, so
# a stalled listener shows as latency, not as a slower sender (no coordinated omission).
#
#   bench/listen_load.py --port 2575 --rate 1000 --seconds 5 [--connections 4] [--prefix R1-]
#   bench/listen_load.py --quire build/native/native/quire --dir /tmp/ladder --rates 500,1000,2000 \
#       --repeat 3 [--listen-flags "--group-ms 5"]
#
# The first prints one JSON line: offered rate, messages sent, ACKs by code, achieved rate (AA a
# second), latency p50/p99/p99.9/max in milliseconds. The second starts a fresh listener (a new
# store in DIR) for each run, runs every rate `repeat` times and prints a line a rate with the
# medians over the runs.
import argparse, json, socket, threading, time

VT, FS, CR = b"\x0b", b"\x1c", b"\r"


def message(cid):
    return ("MSH|^~\\&|LOAD|FAC|QUIRE|RFAC|20261203064115||ADT^A01^ADT_A01|%s|P|2.5\r"
            "EVN|A01|20261203064115\rPID|1||%s^^^HOSP^MR||DOE^JANE^Q||19800101|F\r"
            "PV1|1|I|W1^101^1||||1234^SMITH^JOHN\r" % (cid, cid)).encode()


def sender(sock, prefix, rate, seconds, due, lock, t0):
    n = int(rate * seconds)
    i = 0
    while i < n:
        now = time.monotonic()
        upto = min(n, int((now - t0) * rate) + 1)
        if upto > i:
            batch = []
            with lock:
                for k in range(i, upto):
                    cid = "%s%d" % (prefix, k)
                    due[cid] = t0 + k / rate
                    batch.append(VT + message(cid) + FS + CR)
            sock.sendall(b"".join(batch))
            i = upto
        else:
            time.sleep(max(0.0, t0 + i / rate - now))


def receiver(sock, want, due, lock, latencies, codes, deadline):
    buf = b""
    got = 0
    sock.settimeout(0.5)
    while got < want and time.monotonic() < deadline:
        try:
            data = sock.recv(1 << 16)
        except socket.timeout:
            continue
        if not data:
            break
        now = time.monotonic()
        buf += data
        while True:
            s = buf.find(VT)
            e = buf.find(FS + CR, s + 1)
            if s < 0 or e < 0:
                break
            body, buf = buf[s + 1:e], buf[e + 2:]
            got += 1
            for seg in body.split(CR):
                if seg.startswith(b"MSA|"):
                    f = seg.split(b"|")
                    code, cid = f[1].decode(), f[2].decode()
                    codes[code] = codes.get(code, 0) + 1
                    with lock:
                        t = due.pop(cid, None)
                    if t is not None:
                        latencies.append(now - t)


def pct(sorted_values, p):
    if not sorted_values:
        return None
    k = min(len(sorted_values) - 1, int(p / 100.0 * len(sorted_values)))
    return round(sorted_values[k] * 1000, 2)


def run_load(args):
    per = args.rate / args.connections
    threads, lat, codes = [], [], {}
    lock = threading.Lock()
    t0 = time.monotonic() + 0.2
    deadline = t0 + args.seconds + 10
    sent = 0
    for c in range(args.connections):
        s = socket.create_connection((args.host, args.port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        due = {}
        n = int(per * args.seconds)
        sent += n
        prefix = "%s%d-" % (args.prefix, c)
        threads.append(threading.Thread(target=sender, args=(s, prefix, per, args.seconds, due, lock, t0)))
        threads.append(threading.Thread(target=receiver, args=(s, n, due, lock, lat, codes, deadline)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lat.sort()
    return {
        "offered_per_s": args.rate, "seconds": args.seconds, "connections": args.connections, "sent": sent,
        "acks": codes, "achieved_per_s": round(codes.get("AA", 0) / args.seconds, 1),
        "p50_ms": pct(lat, 50), "p99_ms": pct(lat, 99), "p999_ms": pct(lat, 99.9),
        "max_ms": round(lat[-1] * 1000, 2) if lat else None,
    }


def ladder(args):
    import os, statistics, subprocess
    os.makedirs(args.dir, exist_ok=True)
    for rate in [float(r) for r in args.rates.split(",")]:
        runs = []
        for k in range(args.repeat):
            store = os.path.join(args.dir, "ladder.quire")
            if os.path.exists(store):
                os.remove(store)
            p = subprocess.Popen([args.quire, "listen", "--port", "0", "--store", store] + args.listen_flags.split(),
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            args.port = int(p.stdout.readline().strip().rsplit(":", 1)[1])
            args.rate = rate
            args.prefix = "R%d-" % k
            r = run_load(args)
            # The listener's CPU time (user + system) a stored message: what a commit costs
            # whatever else the machine runs.
            fields = open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()
            ticks = int(fields[11]) + int(fields[12])
            r["cpu_us_per_msg"] = round(ticks / os.sysconf("SC_CLK_TCK") * 1e6 / max(1, r["acks"].get("AA", 0)), 1)
            runs.append(r)
            p.terminate()
            p.wait()
        med = lambda key: statistics.median(r[key] for r in runs if r[key] is not None)
        print(json.dumps({"listen_flags": args.listen_flags, "offered_per_s": rate, "runs": args.repeat,
                          "all_aa": all(r["acks"].get("AA", 0) == r["sent"] for r in runs),
                          "achieved_per_s": med("achieved_per_s"), "p50_ms": med("p50_ms"), "p99_ms": med("p99_ms"),
                          "p999_ms": med("p999_ms"), "max_ms": med("max_ms"),
                          "cpu_us_per_msg": med("cpu_us_per_msg")}), flush=True)


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--host", default="127.0.0.1")
    a.add_argument("--port", type=int)
    a.add_argument("--rate", type=float, help="messages per second, all connections together")
    a.add_argument("--seconds", type=float, default=5)
    a.add_argument("--connections", type=int, default=4)
    a.add_argument("--prefix", default="L-")
    a.add_argument("--quire", help="ladder: the quire binary to start for each run")
    a.add_argument("--dir", default="/tmp/listen-ladder")
    a.add_argument("--rates", default="500,1000,2000,4000")
    a.add_argument("--repeat", type=int, default=3)
    a.add_argument("--listen-flags", default="--group-ms 5")
    args = a.parse_args()
    if args.quire:
        ladder(args)
    else:
        print(json.dumps(run_load(args)))


if __name__ == "__main__":
    main()
