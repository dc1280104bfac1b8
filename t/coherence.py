#!/usr/bin/env python3
"""t/coherence.py: write-then-read pairs against conduitd, through the HTTP
API only (python3's standard library, nothing else).

Each thread registers its own users (an author A and two readers R1, R2)
and keeps a model of everything they own: A's articles (fields, tags,
who favorited them, their comments), who follows A, every user's name, bio
and image.  It then makes a random write (favorite, unfavorite, follow,
unfollow, PUT /api/user, POST, PUT or DELETE an article, POST or DELETE a
comment), checks the write's own answer against the model, and reads back
everything that write changed, in a random order, each request on a NEW
connection (so that a read lands on any worker, not on the writer's).  One
read is one pair: "write answered, then this read".  A read must show the
model exactly: whole objects and whole lists (the author's list, a tag's,
a reader's favorites, the feed, comments), not just the field written.

  --within URL          one instance: every read must be right the first
                        time; any stale read is printed and the exit is 1.
  --across URL_A URL_B  write through A, read through B: each read is
                        polled on B until it is right (the delay from the
                        write's answer to that answer is recorded), then
                        read CONFIRM more times, and must never go back.
                        Exit 1 if a write is not seen within --bound-ms or
                        an old value comes back after the new one.
  --proxy LISTEN URL    not a test: a deliberately stale HTTP proxy (GETs
                        answered from a copy up to --stale-ms old, or a
                        random one of the last two answers with --flap),
                        for proving that the checker catches staleness.

Lists are asked in the shapes a cache may key on: the workload's
(limit=10&offset=0, limit=10), the default page (no parameters: 20),
limit=100, and later pages (offset 10, offset 5 with limit 5).  A thread
keeps at most MAX_ARTICLES live articles and MAX_COMMENTS comments in all,
so its author, tag, favorited and feed lists are known exactly: the page
asked is compared whole, articlesCount included.  The global list (GET
/api/articles, first pages only) is shared with the other threads, which
create and delete articles meanwhile: an article of this thread must be on
the page unless enough newer ones push it off (the page is full and its
last entry is not older than the article), every article of this thread
on it must be live and shown as the model says, and a deleted one must not
be there.

Every request carries a User-Agent "coherence/<run> <thread>-<write>
w|r<n>", so a JSON access log tells which worker answered each pair
(--spread LOG reads one and says how many reads crossed workers).
"""

import argparse
import http.client
import json
import random
import socketserver
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_ARTICLES = 12
MAX_COMMENTS = 24
# (query string, limit, offset) of the pages asked; the first is the
# workload's and is asked most.
SHAPES = [("limit=10&offset=0", 10, 0)] * 4 + [("limit=10", 10, 0), ("", 20, 0),
                                                ("limit=100", 100, 0),
                                                ("limit=10&offset=10", 10, 10),
                                                ("offset=5&limit=5", 5, 5)]

KINDS = ["favorite", "unfavorite", "follow", "unfollow", "user", "create",
         "update", "delete", "comment", "uncomment"]


class Failure(Exception):
    """A request that failed outright (not a stale answer): the run stops."""


def split_url(url):
    u = urllib.parse.urlsplit(url)
    if u.scheme != "http" or not u.hostname:
        raise SystemExit("not an http URL: %s" % url)
    if not u.hostname.startswith("127."):
        raise SystemExit("only 127.0.0.0/8 is allowed: %s" % url)
    # Port 0 is a port: the stale proxy listens on one the kernel picks.
    # ("or 80" made it 80, which two suites side by side both bound.)
    return u.hostname, u.port if u.port is not None else 80


def request(hostport, method, path, body=None, token=None, ua="coherence"):
    """One request on a new connection: (status, parsed JSON or None, raw,
    start, end) with times from time.monotonic()."""
    headers = {"User-Agent": ua, "Connection": "close"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    if token:
        headers["Authorization"] = "Token " + token
    t0 = time.monotonic()
    conn = http.client.HTTPConnection(hostport[0], hostport[1], timeout=20)
    try:
        conn.request(method, path, body=data, headers=headers)
        r = conn.getresponse()
        raw = r.read()
        status = r.status
    except (OSError, http.client.HTTPException) as e:
        raise Failure("%s %s: %s" % (method, path, e))
    finally:
        conn.close()
    t1 = time.monotonic()
    try:
        doc = json.loads(raw) if raw else None
    except ValueError:
        doc = None
    return status, doc, raw, t0, t1


def diff(want, got, where=""):
    """The first difference between two JSON values, as text, or None."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return "%s: expected an object, got %s" % (where or ".", short(got))
        for k, v in want.items():
            if k not in got:
                return "%s.%s: missing" % (where, k)
            d = diff(v, got[k], "%s.%s" % (where, k))
            if d:
                return d
        return None
    if isinstance(want, list):
        if not isinstance(got, list):
            return "%s: expected a list, got %s" % (where or ".", short(got))
        for i, (w, g) in enumerate(zip(want, got)):
            d = diff(w, g, "%s[%d]" % (where, i))
            if d:
                return d
        if len(want) != len(got):
            return "%s: %d entries expected, got %d" % (where, len(want), len(got))
        return None
    if want != got or type(want) is not type(got):
        return "%s: expected %s, got %s" % (where or ".", short(want), short(got))
    return None


def short(v, n=200):
    s = json.dumps(v)
    return s if len(s) <= n else s[:n] + "..."


class Check:
    """One read: a request and what its answer must be.  judge(status, doc)
    returns None when the answer is right, else what is wrong."""

    def __init__(self, label, path, token, judge):
        self.label, self.path, self.token, self.judge = label, path, token, judge


class User:
    def __init__(self, key, username, email, token):
        self.key, self.username, self.email, self.token = key, username, email, token
        self.bio = None
        self.image = None


class Article:
    def __init__(self, doc, n):
        self.n = n
        self.comments = []  # [(id, author key, body, createdAt, updatedAt)], oldest first
        self.fav = set()
        self.set_fields(doc)

    def set_fields(self, doc):
        self.slug = doc["slug"]
        self.title = doc["title"]
        self.description = doc["description"]
        self.body = doc["body"]
        self.tags = list(doc["tagList"])
        self.created = doc["createdAt"]
        self.updated = doc["updatedAt"]


class World:
    """One thread's users and articles, the model every read is held to."""

    def __init__(self, run, tid, rng, stats, write_to, read_from, args):
        self.run, self.tid, self.rng, self.stats = run, tid, rng, stats
        self.write_to, self.read_from, self.args = write_to, read_from, args
        self.users = {}
        self.articles = []  # live, oldest first
        self.deleted = []  # slugs gone (the last few)
        self.follows = set()  # reader keys following A
        self.n = 0  # names drawn
        self.wseq = 0
        self.tagpool = ["%s-t%d-g%d" % (run, tid, i) for i in range(3)]
        self.newtags = 0

    # ------------------------------------------------------------ names
    def name(self, what):
        self.n += 1
        return "%s-t%d-%s%d" % (self.run, self.tid, what, self.n)

    def ua(self, suffix):
        return "coherence/%s %d-%d %s" % (self.run, self.tid, self.wseq, suffix)

    def mine(self, slug):
        return slug.startswith("%s-t%d-" % (self.run, self.tid))

    # ------------------------------------------------------------ writes
    def write(self, method, path, body, token, want_status):
        st, doc, raw, t0, t1 = request(self.write_to, method, path, body, token, self.ua("w"))
        if st != want_status:
            raise Failure("%s %s: status %d, want %d: %s" % (method, path, st, want_status,
                                                              raw[:300]))
        return doc, t1

    def answer_differs(self, kind, what, d):
        if d:
            self.stats.answer_wrong(kind, "%s: the write's own answer: %s" % (what, d))

    def setup(self):
        for key in ("A", "R1", "R2"):
            name = self.name(key.lower())
            doc, _ = self.write("POST", "/api/users", {"user": {
                "username": name, "email": name + "@example.com", "password": "pw-" + name}},
                None, 201)
            self.users[key] = User(key, name, name + "@example.com", doc["user"]["token"])
        for _ in range(3):
            self.create(check=False)

    # ------------------------------------------------------------ expectations
    def profile(self, ukey, viewer):
        u = self.users[ukey]
        following = viewer is not None and ukey == "A" and viewer in self.follows
        return {"username": u.username, "bio": u.bio, "image": u.image, "following": following}

    def article(self, a, viewer, body=True):
        d = {"slug": a.slug, "title": a.title, "description": a.description}
        if body:
            d["body"] = a.body
        d.update({"tagList": a.tags, "createdAt": a.created, "updatedAt": a.updated,
                  "favorited": viewer in a.fav, "favoritesCount": len(a.fav),
                  "author": self.profile("A", viewer)})
        return d

    def tok(self, viewer):
        return self.users[viewer].token if viewer else None

    # ------------------------------------------------------------ reads
    def chk_article(self, a, viewer):
        want = {"article": self.article(a, viewer)}

        def judge(st, doc):
            return "status %d, want 200" % st if st != 200 else diff(want, doc)
        return Check("article", "/api/articles/" + q(a.slug), self.tok(viewer), judge)

    def chk_gone(self, label, path, viewer=None):
        def judge(st, doc):
            return None if st == 404 else "status %d, want 404: %s" % (st, short(doc))
        return Check(label, path, self.tok(viewer), judge)

    def chk_list(self, label, query, viewer, arts):
        shape, limit, offset = self.rng.choice(SHAPES)
        page = list(reversed(arts))[offset:offset + limit]
        want = {"articles": [self.article(a, viewer, body=False) for a in page],
                "articlesCount": len(arts)}
        path = "/api/articles" + query
        if shape:
            path += ("&" if "?" in query else "?") + shape

        def judge(st, doc):
            return "status %d, want 200" % st if st != 200 else diff(want, doc)
        return Check(label, path, self.tok(viewer), judge)

    def chk_author(self, viewer=None, username=None):
        name = username or self.users["A"].username
        arts = self.articles if username is None else []
        return self.chk_list("author list" if username is None else "old author's list",
                             "?author=" + q(name), viewer, arts)

    def chk_tag(self, tag, viewer=None):
        return self.chk_list("tag list", "?tag=" + q(tag), viewer,
                             [a for a in self.articles if tag in a.tags])

    def chk_favorited(self, reader, viewer=None, username=None):
        name = username or self.users[reader].username
        arts = [a for a in self.articles if reader in a.fav] if username is None else []
        return self.chk_list("favorited list" if username is None else "old favoriter's list",
                             "?favorited=" + q(name), viewer, arts)

    def chk_feed(self, reader):
        arts = self.articles if reader in self.follows else []
        return self.chk_list("feed", "/feed", reader, arts)

    def chk_global(self, viewer=None):
        live = {a.slug: a for a in self.articles}
        gone = set(self.deleted)

        def judge(st, doc):
            if st != 200:
                return "status %d, want 200" % st
            page = doc.get("articles", [])
            seen = set()
            for i, e in enumerate(page):
                s = e.get("slug", "")
                if s in gone:
                    return "articles[%d]: %s was deleted, still listed" % (i, s)
                if self.mine(s):
                    if s not in live:
                        return "articles[%d]: %s is not a live article of this thread" % (i, s)
                    d = diff(self.article(live[s], viewer, body=False), e, "articles[%d]" % i)
                    if d:
                        return d
                    seen.add(s)
            full = len(page) >= limit
            last = page[-1]["createdAt"] if page else None
            for s, a in live.items():
                if s not in seen and not (full and a.created <= last):
                    return "%s (created %s) missing from the first %d" % (s, a.created, len(page))
            return None
        shape, limit, _ = self.rng.choice([x for x in SHAPES if x[2] == 0])
        return Check("global list", "/api/articles" + ("?" + shape if shape else ""),
                     self.tok(viewer), judge)

    def chk_tags(self):
        mine = "%s-t%d-" % (self.run, self.tid)
        used = set(t for a in self.articles for t in a.tags)

        def judge(st, doc):
            if st != 200:
                return "status %d, want 200" % st
            got = set(t for t in doc.get("tags", []) if t.startswith(mine))
            if got != used:
                return "this thread's tags: expected %s, got %s" % (sorted(used), sorted(got))
            return None
        return Check("tags", "/api/tags", None, judge)

    def chk_profile(self, ukey, viewer=None):
        want = {"profile": self.profile(ukey, viewer)}

        def judge(st, doc):
            return "status %d, want 200" % st if st != 200 else diff(want, doc)
        return Check("profile", "/api/profiles/" + q(self.users[ukey].username),
                     self.tok(viewer), judge)

    def chk_user(self, ukey):
        u = self.users[ukey]
        want = {"user": {"email": u.email, "username": u.username, "bio": u.bio,
                         "image": u.image}}

        def judge(st, doc):
            return "status %d, want 200" % st if st != 200 else diff(want, doc)
        return Check("user", "/api/user", u.token, judge)

    def chk_comments(self, a, viewer=None):
        want = {"comments": [{"id": c[0], "createdAt": c[3], "updatedAt": c[4], "body": c[2],
                              "author": self.profile(c[1], viewer)}
                             for c in reversed(a.comments)]}

        def judge(st, doc):
            return "status %d, want 200" % st if st != 200 else diff(want, doc)
        return Check("comments", "/api/articles/%s/comments" % q(a.slug), self.tok(viewer), judge)

    # ------------------------------------------------------------ the writes
    def pick_article(self):
        return self.rng.choice(self.articles)

    def favorite(self, on):
        a = self.pick_article()
        r = self.rng.choice(["R1", "R2"])
        doc, t = self.write("POST" if on else "DELETE", "/api/articles/%s/favorite" % q(a.slug),
                            None, self.tok(r), 200)
        (a.fav.add if on else a.fav.discard)(r)
        got = doc["article"]
        self.answer_differs(self.kind, "favorite", diff(
            {"favorited": on, "favoritesCount": len(a.fav)},
            {"favorited": got["favorited"], "favoritesCount": got["favoritesCount"]}))
        # The reads must show what the write answered.
        a.updated = got["updatedAt"]
        other = "R2" if r == "R1" else "R1"
        return t, [self.chk_article(a, r), self.chk_article(a, None), self.chk_article(a, other),
                   self.chk_favorited(r, r), self.chk_favorited(r, None)]

    def follow(self, on):
        r = self.rng.choice(["R1", "R2"])
        doc, t = self.write("POST" if on else "DELETE",
                            "/api/profiles/%s/follow" % q(self.users["A"].username), None,
                            self.tok(r), 200)
        (self.follows.add if on else self.follows.discard)(r)
        self.answer_differs(self.kind, "follow", diff({"profile": self.profile("A", r)}, doc))
        return t, [self.chk_profile("A", r), self.chk_feed(r), self.chk_author(r),
                   self.chk_article(self.pick_article(), r)]

    def put_user(self):
        ukey = self.rng.choice(["A", "A", "R1", "R2"])
        u = self.users[ukey]
        body = {}
        roll = self.rng.random()
        if roll < 0.3:
            body["username"] = self.name(ukey.lower())
        if roll > 0.2:
            body["bio"] = self.rng.choice([None, "", "bio %d of %s" % (self.n, u.key)])
        if self.rng.random() < 0.5 or not body:
            body["image"] = self.rng.choice([None, "https://img.example/%d.png" % self.rng.randrange(10 ** 6)])
        old = u.username
        doc, t = self.write("PUT", "/api/user", {"user": body}, u.token, 200)
        if "username" in body:
            u.username = body["username"]
        if "bio" in body:
            u.bio = body["bio"] or None
        if "image" in body:
            u.image = body["image"] or None
        u.token = doc["user"]["token"]
        self.answer_differs(self.kind, "user", diff(
            {"user": {"email": u.email, "username": u.username, "bio": u.bio, "image": u.image}},
            doc))
        checks = [self.chk_user(ukey), self.chk_profile(ukey), self.chk_profile(ukey, "R1")]
        if u.username != old:
            checks.append(self.chk_gone("old profile", "/api/profiles/" + q(old)))
        if ukey == "A":
            checks += [self.chk_author(), self.chk_article(self.pick_article(), "R2"),
                       self.chk_global()]
            if u.username != old:
                checks.append(self.chk_author(username=old))
            for r in self.follows:
                checks.append(self.chk_feed(r))
        else:
            checks.append(self.chk_favorited(ukey))
            if u.username != old:
                checks.append(self.chk_favorited(ukey, username=old))
        for a in self.articles:
            if any(c[1] == ukey for c in a.comments):
                checks.append(self.chk_comments(a, self.rng.choice([None, "R1"])))
                break
        return t, checks

    def create(self, check=True):
        n = self.n + 1
        tags = self.rng.sample(self.tagpool, self.rng.randint(0, 2))
        if self.rng.random() < 0.25:
            self.newtags += 1
            tags.append("%s-t%d-new%d" % (self.run, self.tid, self.newtags))
        title = "%s t%d a%d" % (self.run, self.tid, n)
        self.n = n
        body = {"title": title, "description": "about " + title, "body": "body of " + title,
                "tagList": tags}
        doc, t = self.write("POST", "/api/articles", {"article": body}, self.tok("A"), 201)
        a = Article(doc["article"], n)
        self.articles.append(a)
        if not check:
            return t, []
        self.answer_differs(self.kind, "create", diff(self.article(a, "A"), doc["article"]) or
                            diff(sorted(set(tags)), a.tags))
        checks = [self.chk_article(a, None), self.chk_global(), self.chk_author(),
                  self.chk_author("R1"), self.chk_tags()]
        checks += [self.chk_tag(tg) for tg in a.tags]
        checks += [self.chk_feed(r) for r in sorted(self.follows)]
        return t, checks

    def update(self):
        a = self.pick_article()
        old_slug, old_tags = a.slug, a.tags
        body = {}
        if self.rng.random() < 0.6:
            body["title"] = "%s t%d a%d v%d" % (self.run, self.tid, a.n, self.rng.randrange(10 ** 6))
        if self.rng.random() < 0.5:
            body["description"] = "described %d" % self.rng.randrange(10 ** 6)
        if self.rng.random() < 0.4:
            body["body"] = "body %d" % self.rng.randrange(10 ** 6)
        if self.rng.random() < 0.5 or not body:
            body["tagList"] = self.rng.sample(self.tagpool, self.rng.randint(0, 3))
        doc, t = self.write("PUT", "/api/articles/" + q(a.slug), {"article": body},
                            self.tok("A"), 200)
        a.set_fields(doc["article"])
        want = {k: v for k, v in body.items() if k != "tagList"}
        if "tagList" in body:
            want["tagList"] = sorted(set(body["tagList"]))
        else:
            want["tagList"] = old_tags
        self.answer_differs(self.kind, "update", diff(want, doc["article"]))
        checks = [self.chk_article(a, None), self.chk_article(a, "R1"), self.chk_author(),
                  self.chk_global(), self.chk_tags()]
        if a.slug != old_slug:
            checks.append(self.chk_gone("old slug", "/api/articles/" + q(old_slug)))
            self.deleted = (self.deleted + [old_slug])[-20:]
        checks += [self.chk_tag(tg) for tg in sorted(set(old_tags) | set(a.tags))]
        checks += [self.chk_favorited(r) for r in sorted(a.fav)]
        checks += [self.chk_feed(r) for r in sorted(self.follows)]
        return t, checks

    def delete(self):
        a = self.pick_article()
        doc, t = self.write("DELETE", "/api/articles/" + q(a.slug), None, self.tok("A"), 204)
        self.articles.remove(a)
        self.deleted = (self.deleted + [a.slug])[-20:]
        checks = [self.chk_gone("deleted article", "/api/articles/" + q(a.slug)),
                  self.chk_gone("deleted article", "/api/articles/" + q(a.slug), "R1"),
                  self.chk_gone("deleted article's comments",
                                "/api/articles/%s/comments" % q(a.slug)),
                  self.chk_global(), self.chk_author(), self.chk_tags()]
        checks += [self.chk_tag(tg) for tg in a.tags]
        checks += [self.chk_favorited(r) for r in sorted(a.fav)]
        checks += [self.chk_feed(r) for r in sorted(self.follows)]
        return t, checks

    def comment(self):
        a = self.pick_article()
        who = self.rng.choice(["A", "R1", "R2"])
        text = "comment %d by %s" % (self.rng.randrange(10 ** 6), who)
        doc, t = self.write("POST", "/api/articles/%s/comments" % q(a.slug),
                            {"comment": {"body": text}}, self.tok(who), 200)
        c = doc["comment"]
        a.comments.append((c["id"], who, text, c["createdAt"], c["updatedAt"]))
        self.answer_differs(self.kind, "comment", diff(
            {"body": text, "author": self.profile(who, who)}, c))
        return t, [self.chk_comments(a), self.chk_comments(a, "R1")]

    def uncomment(self):
        a = self.rng.choice([x for x in self.articles if x.comments])
        c = self.rng.choice(a.comments)
        _, t = self.write("DELETE", "/api/articles/%s/comments/%d" % (q(a.slug), c[0]), None,
                          self.tok(c[1]), 204)
        a.comments.remove(c)
        return t, [self.chk_comments(a), self.chk_comments(a, "R2")]

    def step(self):
        """One write and its checks: (kind, time of the answer, checks)."""
        rng = self.rng
        kind = rng.choices(KINDS, weights=[15, 10, 7, 5, 10, 9, 10, 6, 12, 6])[0]
        if not self.articles or (kind == "create" and len(self.articles) >= MAX_ARTICLES):
            kind = "create" if not self.articles else "delete"
        if kind == "delete" and len(self.articles) <= 2:
            kind = "create"
        if kind == "comment" and sum(len(a.comments) for a in self.articles) >= MAX_COMMENTS:
            kind = "uncomment"
        if kind == "uncomment" and not any(a.comments for a in self.articles):
            kind = "comment"
        if kind == "favorite" and all(a.fav == {"R1", "R2"} for a in self.articles):
            kind = "unfavorite"
        if kind == "follow" and self.follows == {"R1", "R2"}:
            kind = "unfollow"
        self.kind = kind
        self.wseq += 1
        if kind in ("favorite", "unfavorite"):
            t, checks = self.favorite(kind == "favorite")
        elif kind in ("follow", "unfollow"):
            t, checks = self.follow(kind == "follow")
        elif kind == "user":
            t, checks = self.put_user()
        elif kind == "create":
            t, checks = self.create()
        elif kind == "update":
            t, checks = self.update()
        elif kind == "delete":
            t, checks = self.delete()
        elif kind == "comment":
            t, checks = self.comment()
        else:
            t, checks = self.uncomment()
        rng.shuffle(checks)
        return kind, t, checks


def q(s):
    return urllib.parse.quote(s, safe="")


class Stats:
    def __init__(self, mode):
        self.mode = mode
        self.lock = threading.Lock()
        self.writes = {k: 0 for k in KINDS}
        self.pairs = {k: 0 for k in KINDS}
        self.stale = {k: 0 for k in KINDS}
        self.stale_by_read = {}
        self.wrong_answers = 0
        self.delays = []  # ms, write answered -> the read that first showed it
        self.first_stale = 0  # across: reads not right on the first try
        self.stale_delays = []
        self.unseen = 0
        self.back = 0
        self.total = 0

    def say(self, text):
        with self.lock:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()

    def answer_wrong(self, kind, text):
        with self.lock:
            self.wrong_answers += 1
        self.say("WRONG ANSWER TO A WRITE (%s): %s" % (kind, text))


def pct(xs, p):
    if not xs:
        return 0.0
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def run_thread(tid, args, stats, budget, errors):
    rng = random.Random("%s-%d" % (args.seed, tid))
    write_to = split_url(args.urls[0])
    read_from = split_url(args.urls[-1])
    w = World(args.run, tid, rng, stats, write_to, read_from, args)
    try:
        w.setup()
        while True:
            with stats.lock:
                if budget[0] <= 0:
                    return
            kind, t_write, checks = w.step()
            with stats.lock:
                budget[0] -= len(checks)
                stats.writes[kind] += 1
                stats.pairs[kind] += len(checks)
            for i, c in enumerate(checks):
                if args.mode == "within":
                    within_read(w, kind, c, i, t_write, stats, read_from)
                else:
                    across_read(w, kind, c, i, t_write, stats, read_from, args)
    except Failure as e:
        errors.append("thread %d: %s" % (tid, e))
        stats.say("ERROR thread %d: %s" % (tid, e))
    except Exception as e:  # a bug in this script: fail loudly
        import traceback
        errors.append("thread %d: %r" % (tid, e))
        stats.say("ERROR thread %d:\n%s" % (tid, traceback.format_exc()))


def stale_line(w, kind, c, st, doc, why, extra=""):
    if isinstance(doc, dict) and isinstance(doc.get("user"), dict) and "token" in doc["user"]:
        doc = dict(doc, user=dict(doc["user"], token="(a token)"))  # never print a token
    return "STALE %s -> %s: GET %s as %s%s\n    %s\n    got %d %s" % (
        kind, c.label, c.path, who(w, c.token), extra, why, st, short(doc, 600))


def who(w, token):
    if not token:
        return "anonymous"
    for u in w.users.values():
        if u.token == token:
            return u.username
    return "a user of thread %d" % w.tid


def within_read(w, kind, c, i, t_write, stats, read_from):
    st, doc, raw, t0, t1 = request(read_from, "GET", c.path, None, c.token, w.ua("r%d" % i))
    why = c.judge(st, doc)
    if why:
        with stats.lock:
            stats.stale[kind] += 1
            stats.stale_by_read[(kind, c.label)] = stats.stale_by_read.get((kind, c.label), 0) + 1
        stats.say(stale_line(w, kind, c, st, doc, why, " (read %d after the write, sent %.1f ms "
                                                         "after its answer)" % (i + 1, (t0 - t_write) * 1000)))


def across_read(w, kind, c, i, t_write, stats, read_from, args):
    """Polls B until the read is right; i == 0 is the read sent as soon as
    the write was answered, whose delay is the one reported."""
    bound = args.bound_ms / 1000.0
    tries = 0
    last_stale = None
    while True:
        tries += 1
        st, doc, raw, t0, t1 = request(read_from, "GET", c.path, None, c.token,
                                       w.ua("r%d.%d" % (i, tries)))
        why = c.judge(st, doc)
        if not why:
            break
        last_stale = t0
        if t1 - t_write > bound:
            with stats.lock:
                stats.unseen += 1
                stats.stale[kind] += 1
            stats.say(stale_line(w, kind, c, st, doc, why, " on B: still stale %d ms after the "
                                 "write's answer (%d tries)" % ((t1 - t_write) * 1000, tries)))
            return
        time.sleep(0.001)
    with stats.lock:
        if i == 0:
            stats.delays.append((t1 - t_write) * 1000.0)
        if last_stale is not None:
            stats.first_stale += 1
            stats.stale_by_read[(kind, c.label)] = stats.stale_by_read.get((kind, c.label), 0) + 1
            stats.stale_delays.append((last_stale - t_write) * 1000.0)
    # Each worker of B hears the notification on its own: within the delay
    # one may still answer the old value after another answered the new one
    # (docs/caching.md). Past it, none may: a value older than an
    # invalidation a worker has heard is never stored again.
    wait = t_write + args.settle_ms / 1000.0 - time.monotonic()
    if wait > 0:
        time.sleep(wait)
    for j in range(args.confirm):
        st, doc, raw, t0, t1 = request(read_from, "GET", c.path, None, c.token,
                                       w.ua("r%d.c%d" % (i, j)))
        why = c.judge(st, doc)
        if why:
            with stats.lock:
                stats.back += 1
                stats.stale[kind] += 1
            stats.say(stale_line(w, kind, c, st, doc, why,
                                 " on B: the old value came back after the new one was seen"))
            return


def summary(stats, args, elapsed, errors):
    print("# coherence %s: %d writes, %d write-then-read pairs, %d threads, seed %s, %.1f s" % (
        args.mode, sum(stats.writes.values()), sum(stats.pairs.values()), args.threads,
        args.seed, elapsed))
    print("# %-11s %7s %7s %7s" % ("kind", "writes", "pairs", "stale"))
    for k in KINDS:
        print("# %-11s %7d %7d %7d" % (k, stats.writes[k], stats.pairs[k], stats.stale[k]))
    if stats.stale_by_read:
        print("# stale reads by write and read: " + ", ".join(
            "%s->%s %d" % (k, r, n) for (k, r), n in sorted(stats.stale_by_read.items())))
    if args.mode == "across":
        d = stats.delays
        print("# across: delay from a write's answer to B's first right answer to the read "
              "sent at once (an upper bound: it includes that read's own time), over %d writes: "
              "p50 %.1f ms, p99 %.1f ms, max %.1f ms" % (
                  len(d), pct(d, 50), pct(d, 99), max(d) if d else 0.0))
        s = stats.stale_delays
        print("# across: %d of %d reads stale at first on B (the stale window they saw, from "
              "the write's answer to the last stale read sent: p50 %.1f ms, p99 %.1f ms, "
              "max %.1f ms); %d not seen within %d ms; %d went back to an old value"
              % (stats.first_stale, sum(stats.pairs.values()), pct(s, 50), pct(s, 99),
                 max(s) if s else 0.0, stats.unseen, args.bound_ms, stats.back))
    print("# wrong answers to writes: %d; errors: %d" % (stats.wrong_answers, len(errors)))
    stale = sum(stats.stale.values())
    # Machine-readable last line for the shell test.
    print("RESULT mode=%s writes=%d pairs=%d stale=%d wrong=%d errors=%d unseen=%d back=%d "
          "first_stale=%d p50_ms=%.1f p99_ms=%.1f max_ms=%.1f %s" % (
              args.mode, sum(stats.writes.values()), sum(stats.pairs.values()), stale,
              stats.wrong_answers, len(errors), stats.unseen, stats.back, stats.first_stale,
              pct(stats.delays, 50), pct(stats.delays, 99),
              max(stats.delays) if stats.delays else 0.0,
              " ".join("stale_%s=%d" % (k, stats.stale[k]) for k in KINDS)))
    return 1 if stale or stats.wrong_answers or errors else 0


# ------------------------------------------------------------ the stale proxy
def proxy(listen, upstream, stale_ms, flap):
    """A deliberately stale cache in front of a real server, for the checker's
    self-test: GETs answered from a copy made up to stale_ms ago (or, with
    flap, every GET forwarded and answered with the upstream's answer or
    the one before it, at random: the last two different answers), writes
    forwarded."""
    up = split_url(upstream)
    copies = {}
    lock = threading.Lock()

    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def log_message(self, *a):
            pass

        def handle_one(self, method):
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n) if n else None
            auth = self.headers.get("Authorization")
            key = (self.path, auth)
            now = time.monotonic()
            answer = None
            if method == "GET":
                with lock:
                    got = copies.get(key)
                if got and not flap and now - got[-1][0] < stale_ms / 1000.0:
                    answer = got[-1][1:]
            if answer is None:
                headers = {"Content-Type": "application/json"}
                if auth:
                    headers["Authorization"] = auth
                c = http.client.HTTPConnection(up[0], up[1], timeout=20)
                c.request(method, self.path, body=body, headers=headers)
                r = c.getresponse()
                answer = (r.status, r.read())
                c.close()
                if method == "GET":
                    with lock:
                        old = copies.get(key, [])
                        if not flap or not old or old[-1][1:] != answer:
                            copies[key] = (old + [(now,) + answer])[-2:]
                        if flap:
                            answer = random.choice(copies[key])[1:]
            self.send_response(answer[0])
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer[1])))
            self.end_headers()
            self.wfile.write(answer[1])

        def do_GET(self):
            self.handle_one("GET")

        def do_POST(self):
            self.handle_one("POST")

        def do_PUT(self):
            self.handle_one("PUT")

        def do_DELETE(self):
            self.handle_one("DELETE")

    host, port = split_url(listen)
    socketserver.TCPServer.allow_reuse_address = True
    srv = ThreadingHTTPServer((host, port), H)
    srv.daemon_threads = True
    print("proxy listening on %s:%d" % srv.server_address, flush=True)
    srv.serve_forever()


# ------------------------------------------------------------ worker spread
def spread(path, run):
    """From a JSON access log: for each read, was it answered by the worker
    that answered its write?  Prints the counts, returns 0."""
    workers = {}
    for line in open(path, encoding="utf-8", errors="replace"):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        ua = e.get("user_agent", "")
        if not ua.startswith("coherence/%s " % run):
            continue
        _, pair, role = ua.split(" ", 2)
        workers[(pair, role)] = e.get("worker")
    reads = other = 0
    used = set()
    for (pair, role), wk in workers.items():
        used.add(wk)
        if role == "w":
            continue
        ww = workers.get((pair, "w"))
        if ww is None:
            continue
        reads += 1
        other += wk != ww
    print("SPREAD reads=%d other_worker=%d workers=%d" % (reads, other, len(used)))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--within", metavar="URL")
    g.add_argument("--across", nargs=2, metavar=("URL_A", "URL_B"))
    g.add_argument("--proxy", nargs=2, metavar=("LISTEN", "URL"))
    g.add_argument("--spread", metavar="ACCESS_LOG")
    p.add_argument("--pairs", type=int, default=1000, help="write-then-read pairs in all")
    p.add_argument("--threads", type=int, default=4)
    p.add_argument("--seed", default="1")
    p.add_argument("--run", default=None,
                   help="prefix of every name this run makes (default: from the seed and time)")
    p.add_argument("--bound-ms", type=int, default=2000)
    p.add_argument("--confirm", type=int, default=3,
                   help="across: reads after the first right one that must stay right")
    p.add_argument("--settle-ms", type=int, default=250,
                   help="across: the confirming reads are sent this long after the write's "
                        "answer at the earliest (past the notification's delay)")
    p.add_argument("--stale-ms", type=int, default=1000)
    p.add_argument("--flap", action="store_true")
    args = p.parse_args()
    if args.proxy:
        proxy(args.proxy[0], args.proxy[1], args.stale_ms, args.flap)
        return 0
    if args.spread:
        if not args.run:
            raise SystemExit("--spread needs --run")
        return spread(args.spread, args.run)
    if args.run is None:
        args.run = "c%s%x" % (args.seed, int(time.time() * 1000) % (1 << 32))
    args.run = args.run.lower()
    args.mode = "within" if args.within else "across"
    args.urls = [args.within] if args.within else args.across
    stats = Stats(args.mode)
    budget = [args.pairs]
    errors = []
    t0 = time.monotonic()
    threads = [threading.Thread(target=run_thread, args=(i + 1, args, stats, budget, errors))
               for i in range(args.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("# run %s" % args.run)
    return summary(stats, args, time.monotonic() - t0, errors)


if __name__ == "__main__":
    sys.exit(main())
