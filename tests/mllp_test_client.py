# What the listener tests' MLLP clients share (tests/cli_listen.sh, tests/cli_listen_tls.sh): an
# ADT^A01 message, MLLP framing, and reading ACK frames back as (MSA-1, MSA-2).
import socket

VT, FS, CR = b"\x0b", b"\x1c", b"\r"


def message(cid, sender="SND"):
    return ("MSH|^~\\&|%s|FAC|RCV|RFAC|20261203064115||ADT^A01^ADT_A01|%s|P|2.5\r"
            "EVN|A01|20261203064115\rPID|1||PAT-%s^^^HOSP^MR||DOE^JANE\rPV1|1|I|W1^101^1\r" % (sender, cid, cid)).encode()


def frame(b):
    return VT + b + FS + CR


def read_acks(sock, want, timeout=10.0, on_error=None):
    """Reads `want` ACK frames; returns [(msa1, msa2)] (fewer when the peer closes or fails:
    on_error, when given, is told of the failure)."""
    sock.settimeout(timeout)
    buf, out = b"", []
    while len(out) < want:
        try:
            data = sock.recv(65536)
        except OSError as e:  # ssl.SSLError and timeouts too
            if on_error:
                on_error(e)
            break
        if not data:
            break
        buf += data
        while True:
            s = buf.find(VT)
            e = buf.find(FS + CR, s + 1)
            if s < 0 or e < 0:
                break
            body, buf = buf[s + 1:e], buf[e + 2:]
            msa = [seg for seg in body.split(b"\r") if seg.startswith(b"MSA|")]
            f = msa[0].split(b"|") if msa else [b"", b"", b""]
            out.append((f[1].decode(), f[2].decode() if len(f) > 2 else ""))
    return out
