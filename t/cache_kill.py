#!/usr/bin/env python3
"""Answers under kills: reader threads ask an instance with its cache on
(on new connections, so on any of its workers) every read shape of
t/cache_answers.py, as nobody and as two signed-in users, and compare each
answer byte for byte with what an instance with no cache on the same
database answers, while the caller of this script SIGKILLs the cached
instance's workers.  A writer thread makes a write through the cached
instance now and then (favorites, follows, a new article, a bio); the
readers stop for it, and the expected answers are read again from the
uncached instance once it is answered.

A request cut by a kill (no answer: the connection reset or closed) is
counted, not compared: the worker that had it is gone; so is a 503 (a
worker overloaded for a moment while others respawn).  A write cut so
may or may not have committed: the readers then wait a second, for the
other workers to hear its notification (the dead worker may have died
before it bumped the stamps), and the expected answers are read again.

usage: cache_kill.py OFF_URL ON_URL DATA_JSON SECONDS [final]
With "final", no writes and no tolerance: every read three times, no
request may fail.  Prints one line per difference; exits 1 if any.
"""
import http.client
import json
import random
import sys
import threading
import time

sys.dont_write_bytecode = True  # a test writes nothing into the source tree
import answers_client  # noqa: E402
from answers_client import q  # noqa: E402

OFF, ON = sys.argv[1], sys.argv[2]
DATA = json.loads(sys.argv[3])
SECONDS = float(sys.argv[4])
FINAL = len(sys.argv) > 5 and sys.argv[5] == "final"
THREADS = 6


# Longer than cache_answers.py's 10 s: workers die and respawn under it.
TIMEOUT = 15


def request(base, method, path, body=None, token=None):
    return answers_client.request(base, method, path, body, token, timeout=TIMEOUT)


def reads(me):
    paths = ["/api/articles?limit=10&offset=0", "/api/articles?limit=10&offset=10",
             "/api/articles", "/api/tags"]
    paths += ["/api/articles?tag=%s&limit=10" % q(t) for t in DATA["tags"]]
    paths += ["/api/articles?author=%s&limit=10" % q(a) for a in DATA["authors"]]
    paths += ["/api/articles?favorited=%s&limit=10" % q(f) for f in DATA["fans"]]
    paths += ["/api/articles/%s" % q(s) for s in DATA["slugs"]]
    paths += ["/api/profiles/%s" % q(a) for a in DATA["authors"][:3]]
    if me:
        paths += ["/api/articles/feed?limit=10&offset=0", "/api/articles/feed", "/api/user",
                  "/api/articles?favorited=%s&limit=10" % q(me["username"])]
    return paths


class Gate:
    """Readers share it; the writer takes it alone (a readers-writer lock)."""

    def __init__(self):
        self.cv = threading.Condition()
        self.readers = 0
        self.writing = False

    def read_begin(self):
        with self.cv:
            while self.writing:
                self.cv.wait()
            self.readers += 1

    def read_end(self):
        with self.cv:
            self.readers -= 1
            self.cv.notify_all()

    def write_begin(self):
        with self.cv:
            self.writing = True
            while self.readers:
                self.cv.wait()

    def write_end(self):
        with self.cv:
            self.writing = False
            self.cv.notify_all()


users = [answers_client.login(OFF, e, timeout=TIMEOUT) for e in DATA["emails"]]
viewers = [None] + users
gate = Gate()
want = {}
stats = {"compared": 0, "diffs": 0, "cut": 0, "shed": 0, "writes": 0, "writes_cut": 0}
lock = threading.Lock()
stop = threading.Event()


def expect_all():
    for v in viewers:
        tok = v["token"] if v else None
        for path in reads(v):
            want[(tok, path)] = request(OFF, "GET", path, token=tok)


def compare(v, path):
    tok = v["token"] if v else None
    try:
        got = request(ON, "GET", path, token=tok)
    except (OSError, http.client.HTTPException):
        with lock:
            stats["cut"] += 1
        return
    exp = want[(tok, path)]
    with lock:
        if got[0] == 503 and exp[0] != 503:
            stats["shed"] += 1  # overloaded for a moment (a respawn): no answer to compare
            return
        stats["compared"] += 1
        if got != exp:
            stats["diffs"] += 1
            print("DIFF as %s: GET %s\n  no cache: %d %s\n  cache:    %d %s"
                  % (v["username"] if v else "anonymous", path, exp[0], exp[1][:300], got[0],
                     got[1][:300]), flush=True)


def reader(seed):
    rnd = random.Random(seed)
    while not stop.is_set():
        v = rnd.choice(viewers)
        path = rnd.choice(reads(v))
        gate.read_begin()
        try:
            compare(v, path)
        finally:
            gate.read_end()


def writes():
    a, b = users[0], users[1]
    s0 = DATA["slugs"][0]
    author = DATA["authors"][0]
    n = 0
    while True:
        n += 1
        yield ("POST", "/api/articles/%s/favorite" % q(s0), None, a)
        yield ("POST", "/api/profiles/%s/follow" % q(author), None, b)
        yield ("PUT", "/api/user", {"user": {"bio": "bio %d" % n}}, b)
        yield ("DELETE", "/api/articles/%s/favorite" % q(s0), None, a)
        yield ("POST", "/api/articles", {"article": {
            "title": "Kill test %d %d" % (n, random.randrange(1 << 30)), "description": "d",
            "body": "b", "tagList": [DATA["tags"][0]]}}, a)
        yield ("DELETE", "/api/profiles/%s/follow" % q(author), None, b)


def writer():
    for method, path, body, who in writes():
        if stop.wait(0.7):
            return
        gate.write_begin()
        try:
            try:
                request(ON, method, path, body, who["token"])
                stats["writes"] += 1
            except (OSError, http.client.HTTPException):
                # Cut by a kill: committed or not, heard by the others within ms.
                stats["writes_cut"] += 1
                time.sleep(1.0)
            expect_all()
        finally:
            gate.write_end()


def main():
    expect_all()
    if FINAL:
        for v in viewers:
            for path in reads(v):
                for _ in range(3):
                    compare(v, path)
    else:
        threads = [threading.Thread(target=reader, args=(i,)) for i in range(THREADS)]
        threads.append(threading.Thread(target=writer))
        for t in threads:
            t.start()
        time.sleep(SECONDS)
        stop.set()
        for t in threads:
            t.join()
    print("# %d answers compared, %d differed, %d requests cut by a kill, %d shed (503); "
          "%d writes answered, %d cut" % (stats["compared"], stats["diffs"], stats["cut"],
                                          stats["shed"], stats["writes"], stats["writes_cut"]))
    bad = stats["diffs"] > 0 or stats["compared"] == 0 or (
        FINAL and stats["cut"] + stats["shed"] > 0)
    sys.exit(1 if bad else 0)


main()
