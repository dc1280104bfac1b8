#!/bin/sh
# header_timeout runs from the accept, as nginx's client_header_timeout:
# with --header-timeout 3 and --idle-timeout 30, a client that connects
# and never sends a byte is closed 3 to 3.375 s after it connected (the
# deadline is stretched by up to an eighth), not at the idle timeout (it
# was, before: 30 s); one whose first byte comes 2.5 s in and that then
# trickles is cut by the same deadline from its accept (before 5.5 s: from
# its first byte it would be 5.5 s or later); a kept-alive connection after an
# answered request is left to the idle timeout (still served 5 s after
# its answer, well past the header timeout), and its next request gets a
# deadline of its own, from its first byte.
# The bounds leave slack above the deadline for a busy machine; none
# reaches the other timeout they tell apart.
. "$top_srcdir/t/lib.sh"

[ -x "$PY" ] || skip "python3 not installed"
pg_start
conduitd_start -w 1 --header-timeout 3 --idle-timeout 30
# The deadlines are measured alone (t/lib.sh), not beside the rest of the suite.
exclusive

# probe MODE: prints the seconds from the connect to the server's close
# (or "open" after 20 s), with what MODE does on the connection:
#   silent   nothing
#   trickle  sleep 2.5 s, then a header byte every 300 ms, never finished
#   kept     a request, its answer, 5 s idle, a request, its answer
#            (prints the two statuses first), then 4 s of a half-sent
#            request: the second deadline counts from its first byte
probe() {
    "$PY" - "$PORT" "$1" <<'PY'
import socket, sys, time
port, mode = int(sys.argv[1]), sys.argv[2]
s = socket.create_connection(("127.0.0.1", port))
t0 = time.monotonic()
out = []
def status():
    got = b""
    while b"\r\n\r\n" not in got:
        b = s.recv(4096)
        if not b:
            return "closed"
        got += b
    head, _, rest = got.partition(b"\r\n\r\n")
    n = int([l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")][0])
    while len(rest) < n:
        rest += s.recv(4096)
    return head.split(b" ")[1].decode()
req = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
if mode == "trickle":
    time.sleep(2.5)
    s.setblocking(False)
    for c in b"GET /healthz HTTP/1.1\r\nX-Slow: " + b"a" * 100:
        try:
            s.send(bytes([c]))
        except OSError:
            break
        try:
            if s.recv(1) == b"":
                break
        except BlockingIOError:
            pass
        except OSError:
            break
        time.sleep(0.3)
    s.setblocking(True)
elif mode == "kept":
    s.sendall(req)
    out.append(status())
    time.sleep(5)
    s.sendall(req)
    out.append(status())
    s.sendall(b"GET /healthz HTTP/1.1\r\n")
    t0 = time.monotonic()
s.settimeout(20)
try:
    while s.recv(4096):
        pass
    out.append("%.2f" % (time.monotonic() - t0))
except socket.timeout:
    out.append("open")
except OSError:
    out.append("%.2f" % (time.monotonic() - t0))
print(" ".join(out))
PY
}

# within SECONDS LO HI: closed, at least LO and under HI seconds.
within() { [ "$1" != open ] && fcmp "$1" ">=" "$2" && fcmp "$1" "<" "$3"; }

silent=$(probe silent)
note "a connection that sends nothing: closed after $silent s (header timeout 3 s, idle timeout 30 s)"
check "it is closed at the header timeout, from the accept ($silent s)" \
    within "$silent" 2.95 6
trickle=$(probe trickle)
note "a client whose first byte comes 2.5 s in, then one every 300 ms: cut after $trickle s"
check "it is cut by the deadline from its accept, not from its first byte ($trickle s)" \
    within "$trickle" 2.95 5.5
set -- $(probe kept)
note "a kept-alive connection: $1, then $2 after 5 s idle; its next request half sent: cut after $3 s"
is "a kept-alive connection idle 5 s (past the header timeout) is still served" "$1 $2" "200 200"
check "its next request's deadline runs from that request's first byte ($3 s)" \
    within "$3" 2.95 6
is "still serving" "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$BASE/healthz")" 200
done_testing
