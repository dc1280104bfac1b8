#!/bin/sh
# Request framing to RFC 9112 (sections 2.2, 3, 5, 6.1, 6.3, 7.1), against
# request smuggling: a request that a proxy in front and conduitd could
# split differently is refused (400; 501 for an unknown transfer coding,
# 505 for an HTTP version other than 1.x), once, and its connection
# closed, so whatever follows it on the connection (here a second
# request, "smuggled", that a looser reading would answer) is never read.
# Each case is sent in one write, then byte by byte (the header split over
# many reads); each must draw exactly one response, the refusal, with
# "Connection: close", then the end of the stream.  Before the check, each
# of these drew two responses (or more), the smuggled request's among them.
# Requests that are fine still are served: pipelined, kept alive, with
# bodies by Content-Length (leading zeros too) and chunked (with a
# trailer), tabs and bytes over 0x7f in values, HTTP/1.0 without Host;
# all answered on one connection.
. "$top_srcdir/t/lib.sh"

[ -x "$PY" ] || skip "python3 not installed"
pg_start
conduitd_start -w 1

# send_raw MODE: reads the request from stdin, writes it to a new
# connection (MODE "whole": one write; "bytes": a byte a write), reads
# until the server closes (or 3 s of silence), and prints the status codes
# of the responses read, space-separated, then "closed" or "open", then
# "close" if the first response said "Connection: close".
send_raw() { "$PY" "$T/send_raw.py" "$PORT" "$1"; }
cat >"$T/send_raw.py" <<'PY'
import re, socket, sys, time
port, mode = int(sys.argv[1]), sys.argv[2]
data = sys.stdin.buffer.read()
s = socket.create_connection(("127.0.0.1", port))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
if mode == "whole":
    s.sendall(data)
else:
    for i in range(len(data)):
        try:
            s.sendall(data[i:i + 1])
        except OSError:
            break  # refused and closed before the rest: the rest is not read
        time.sleep(0.002)
s.settimeout(3)
got, state = b"", "open"
while True:
    try:
        b = s.recv(65536)
    except socket.timeout:
        break
    except ConnectionResetError:
        state = "reset"
        break
    if not b:
        state = "closed"
        break
    got += b
codes, first = [], None
while got:
    head, sep, rest = got.partition(b"\r\n\r\n")
    m = re.match(rb"HTTP/1\.[01] (\d{3}) ", head)
    if not sep or not m:
        codes.append("garbage")
        break
    n = re.search(rb"\r\ncontent-length: *(\d+)", head, re.I)
    codes.append(m.group(1).decode())
    first = head.lower() if first is None else first
    got = rest[int(n.group(1)) if n else 0:]
print(" ".join(codes) or "none", state,
      "close" if first and b"\r\nconnection: close" in first else "keep")
PY

SMUGGLED='GET /api/tags HTTP/1.1\r\nHost: x\r\n\r\n'
# refused NAME STATUS REQUEST: REQUEST (printf format), then SMUGGLED, sent
# whole and byte by byte: one response, STATUS, then closed.
refused() {
    for mode in whole bytes; do
        got=$(printf "$3$SMUGGLED" | send_raw $mode)
        is "$1 ($mode): one answer, $2, then closed" "$got" "$2 closed close"
    done
}

refused "two Content-Length fields, different" 400 \
    'POST /api/users HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 36\r\n\r\n'
refused "two Content-Length fields, equal" 400 \
    'POST /api/users HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}'
refused "Content-Length: +2" 400 'POST /api/users HTTP/1.1\r\nHost: x\r\nContent-Length: +2\r\n\r\n{}'
refused "Content-Length: 2, 2" 400 'POST /api/users HTTP/1.1\r\nHost: x\r\nContent-Length: 2, 2\r\n\r\n{}'
refused "Content-Length: 0x2" 400 'POST /api/users HTTP/1.1\r\nHost: x\r\nContent-Length: 0x2\r\n\r\n{}'
refused "an empty Content-Length" 400 'POST /api/users HTTP/1.1\r\nHost: x\r\nContent-Length: \r\n\r\n'
refused "Content-Length with a space before the colon" 400 \
    'POST /api/users HTTP/1.1\r\nHost: x\r\nContent-Length : 36\r\n\r\n'
refused "a field name with a space before the colon" 400 'GET /api/tags HTTP/1.1\r\nHost: x\r\nX-A : b\r\n\r\n'
refused "a field name with a character outside a token" 400 'GET /api/tags HTTP/1.1\r\nHost: x\r\nX(A): b\r\n\r\n'
refused "a field line without a colon" 400 'GET /api/tags HTTP/1.1\r\nHost: x\r\nX-A b\r\n\r\n'
refused "Transfer-Encoding with Content-Length" 400 \
    'POST /api/users HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 36\r\n\r\n0\r\n\r\n'
refused "Content-Length with Transfer-Encoding" 400 \
    'POST /api/users HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'
refused "Transfer-Encoding: gzip, chunked (a coding not implemented)" 501 \
    'POST /api/users HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n'
refused "Transfer-Encoding: chunked, gzip (chunked not last)" 400 \
    'POST /api/users HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n'
refused "Transfer-Encoding: identity" 400 \
    'POST /api/users HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\n\r\n'
refused "Transfer-Encoding with a tab before chunked (evhttp ignores it)" 501 \
    'POST /api/users HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:\tchunked\r\n\r\n0\r\n\r\n'
refused "two Transfer-Encoding fields" 400 \
    'POST /api/users HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'
refused "Transfer-Encoding in HTTP/1.0" 400 \
    'POST /api/users HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'
refused "a chunk size with a sign" 400 \
    'POST /api/users HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n+0\r\n\r\n'
refused "a chunk size 0x2" 400 \
    'POST /api/users HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0x2\r\n{}\r\n0\r\n\r\n'
refused "a chunk without its CRLF" 400 \
    'POST /api/users HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}0\r\n\r\n'
refused "a chunk size with an extension" 400 \
    'POST /api/users HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2;a=b\r\n{}\r\n0\r\n\r\n'
refused "a folded header line (obs-fold)" 400 'GET /api/tags HTTP/1.1\r\nHost: x\r\nX-A: b\r\n c\r\n\r\n'
refused "whitespace between the request line and the first field" 400 \
    'GET /api/tags HTTP/1.1\r\n Host: x\r\n\r\n'
refused "a bare LF" 400 'GET /api/tags HTTP/1.1\nHost: x\n\n'
refused "a bare LF in one field line" 400 'GET /api/tags HTTP/1.1\r\nHost: x\nX-A: b\r\n\r\n'
refused "a bare CR in a field value" 400 'GET /api/tags HTTP/1.1\r\nHost: x\r\nX-A: b\rc\r\n\r\n'
refused "a NUL in a field value" 400 'GET /api/tags HTTP/1.1\r\nHost: x\r\nX-A: b\000c\r\n\r\n'
refused "a NUL in a field name" 400 'GET /api/tags HTTP/1.1\r\nHost: x\r\nX\000A: b\r\n\r\n'
refused "a body on a GET (Content-Length)" 400 \
    'GET /api/tags HTTP/1.1\r\nHost: x\r\nContent-Length: 36\r\n\r\n'
refused "a body on a DELETE (chunked)" 400 \
    'DELETE /api/tags HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'
refused "HTTP/1.1 without Host" 400 'GET /api/tags HTTP/1.1\r\n\r\n'
refused "two Host fields" 400 'GET /api/tags HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n'
refused "two spaces in the request line" 400 'GET  /api/tags HTTP/1.1\r\nHost: x\r\n\r\n'
refused "a tab in the request line" 400 'GET\t/api/tags HTTP/1.1\r\nHost: x\r\n\r\n'
refused "HTTP/2.0 in the request line" 505 'GET /api/tags HTTP/2.0\r\nHost: x\r\n\r\n'
refused "a lower-case http/1.1" 400 'GET /api/tags http/1.1\r\nHost: x\r\n\r\n'

printf 'GET /api/tags HTTP/1.1\r\nHost: x\r\nX-A : b\r\n\r\n' | "$PY" -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(sys.stdin.buffer.read())
s.settimeout(5)
got = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    got += b
sys.stdout.write(got.split(b"\r\n\r\n", 1)[1].decode())' "$PORT" >"$T/envelope"
is "the refusal's body is the JSON error envelope" "$(cat "$T/envelope")" \
    '{"errors":{"body":["malformed header field name"]}}'

# What is fine is served, all of it on one connection, kept alive.
ok=$(printf 'GET /api/tags HTTP/1.1\r\nhost: x\r\nX-Tab:\tb\t\r\nX-Obs: \351t\351\r\n\r\n''POST /api/users HTTP/1.1\r\nHost: x\r\nContent-Length: 002\r\n\r\n{}''POST /api/users HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n2\r\n{}\r\n0\r\nX-Trailer: t\r\n\r\n''PUT /api/user HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n''GET /api/tags HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n''GET /api/tags HTTP/1.0\r\nConnection: keep-alive\r\n\r\n''GET /api/tags HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' |
    send_raw whole)
is "pipelined requests that are fine: all answered, then closed as the last asked" "$ok" \
    "200 422 422 401 200 200 200 closed keep"
ok=$(printf 'GET /api/tags HTTP/1.1\r\nHost: x\r\n\r\n''POST /api/users HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n1\r\n}\r\n0\r\n\r\n''GET /api/tags HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' |
    send_raw bytes)
is "some of the same, byte by byte" "$ok" "200 422 200 closed keep"
is "still serving" "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$BASE/healthz")" 200
done_testing
