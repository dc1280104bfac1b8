#!/usr/bin/env python3
"""t/retry_writes.py: comments posted the way a careful client posts them
while the database breaks under it (t/integration/idempotency.sh), with
python3's standard library only.

  retry_writes.py URL TOKEN SLUG OUT.json [--threads N] [--writes N]
                  [--seconds S] [--no-key]

Each of N threads posts N comments (no new one after S seconds) to POST /api/articles/SLUG/comments,
each with a body of its own and, unless --no-key, a fresh Idempotency-Key.
A request that failed (no complete answer, or a 5xx, or a 409: another
attempt with the same key in flight) is sent again, the same bytes with
the same key, after 20 ms, for up to 60 s, as a client does that follows
Retry-After or cannot tell what happened.  Every request is on a new
connection.

OUT.json gets, per write: its key and body, every attempt's status (0: no
answer), whether the attempt carried Retry-After and Idempotent-Replayed,
and the final status.  The test reads it against the table.
"""

import argparse
import http.client
import json
import threading
import time
import urllib.parse
import uuid


def post(base, path, token, body, key):
    u = urllib.parse.urlsplit(base)
    headers = {"Content-Type": "application/json", "Authorization": "Token " + token,
               "Connection": "close"}
    if key:
        headers["Idempotency-Key"] = key
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    try:
        conn.request("POST", path, body=body, headers=headers)
        r = conn.getresponse()
        r.read()
        return (r.status, r.getheader("Retry-After") is not None,
                r.getheader("Idempotent-Replayed") == "true")
    except (OSError, http.client.HTTPException):
        return (0, False, False)
    finally:
        conn.close()


def worker(args, t, out, lock):
    path = "/api/articles/%s/comments" % urllib.parse.quote(args.slug)
    end = time.monotonic() + args.seconds
    for i in range(args.writes):
        if time.monotonic() > end:
            return
        key = None if args.no_key else "%d-%d-%s" % (t, i, uuid.uuid4())
        text = "retry %d-%d %s" % (t, i, uuid.uuid4())
        body = json.dumps({"comment": {"body": text}})
        attempts = []
        final = 0
        give_up = time.monotonic() + 60
        while time.monotonic() < give_up:
            st, ra, replayed = post(args.url, path, args.token, body, key)
            attempts.append({"status": st, "retry_after": ra, "replayed": replayed})
            if st != 0 and st < 500 and st != 409:
                final = st
                break
            time.sleep(0.02)
        with lock:
            out.append({"key": key, "body": text, "final": final, "attempts": attempts})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("token")
    ap.add_argument("slug")
    ap.add_argument("out")
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--writes", type=int, default=200)
    ap.add_argument("--no-key", action="store_true")
    ap.add_argument("--seconds", type=float, default=3600)
    args = ap.parse_args()
    out, lock = [], threading.Lock()
    threads = [threading.Thread(target=worker, args=(args, t, out, lock))
               for t in range(args.threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    with open(args.out, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
