#!/usr/bin/env python3
"""The cache never changes an answer: every read asked of an instance with
its cache on (on new connections, so on any of its workers, three times so
that the later ones come from the cache) must be byte for byte the answer
of an instance with no cache on the same database.  Between rounds, writes
go through the cached instance; each round must see them at once.

usage: cache_answers.py OFF_URL ON_URL DATA_JSON
DATA_JSON: {"tags": [...], "authors": [...], "fans": [...], "slugs": [...],
            "emails": [...]} picked from the seeded database.
Prints one line per difference; exits 1 if any.
"""
import json
import sys

sys.dont_write_bytecode = True  # a test writes nothing into the source tree
from answers_client import login, q, request  # noqa: E402

OFF, ON = sys.argv[1], sys.argv[2]
DATA = json.loads(sys.argv[3])
diffs = 0
compared = 0


def reads(me):
    paths = ["/api/articles?limit=10&offset=0", "/api/articles?limit=10&offset=10",
             "/api/articles?limit=3&offset=1", "/api/articles", "/api/tags"]
    paths += ["/api/articles?tag=%s&limit=10" % q(t) for t in DATA["tags"]]
    paths += ["/api/articles?author=%s&limit=10" % q(a) for a in DATA["authors"]]
    paths += ["/api/articles?favorited=%s&limit=10" % q(f) for f in DATA["fans"]]
    paths += ["/api/articles/%s" % q(s) for s in DATA["slugs"]]
    paths += ["/api/articles/%s/comments" % q(s) for s in DATA["slugs"][:3]]
    paths += ["/api/profiles/%s" % q(a) for a in DATA["authors"][:3]]
    paths += ["/api/articles?tag=no-such-tag", "/api/articles?author=nobody-here",
              "/api/articles/no-such-slug-0"]
    if me:
        paths += ["/api/articles/feed?limit=10&offset=0", "/api/articles/feed?limit=10&offset=10",
                  "/api/articles/feed", "/api/user",
                  "/api/articles?author=%s&limit=10" % q(me["username"]),
                  "/api/articles?favorited=%s&limit=10" % q(me["username"])]
    return paths


def compare_round(label, viewers):
    global diffs, compared
    for me in viewers:
        tok = me["token"] if me else None
        for path in reads(me):
            want = request(OFF, "GET", path, token=tok)
            for i in range(3):
                got = request(ON, "GET", path, token=tok)
                compared += 1
                if got != want:
                    diffs += 1
                    print("DIFF %s as %s, read %d: GET %s\n  no cache: %d %s\n  cache:    %d %s"
                          % (label, me["username"] if me else "anonymous", i + 1, path,
                             want[0], want[1][:300], got[0], got[1][:300]))
                    break


def main():
    users = [login(OFF, e) for e in DATA["emails"]]
    viewers = [None] + users
    a, b = users[0], users[1]
    compare_round("cold and warm", viewers)

    def write(label, method, path, body, who, want):
        st, out = request(ON, method, path, body, who["token"])
        assert st == want, (label, st, out)
        compare_round("after " + label, viewers)
        return out

    s0, s1 = DATA["slugs"][0], DATA["slugs"][1]
    write("a favorite", "POST", "/api/articles/%s/favorite" % q(s0), None, a, 200)
    write("another's favorite of the same", "POST", "/api/articles/%s/favorite" % q(s0), None, b,
          200)
    write("an unfavorite", "DELETE", "/api/articles/%s/favorite" % q(s0), None, a, 200)
    write("a follow", "POST", "/api/profiles/%s/follow" % q(DATA["authors"][0]), None, a, 200)
    out = write("a new article", "POST", "/api/articles",
                {"article": {"title": "Cache answers one", "description": "d", "body": "b",
                             "tagList": [DATA["tags"][0], "cache-answers-new"]}}, b, 201)
    slug = json.loads(out)["article"]["slug"]
    write("a follow of its author", "POST", "/api/profiles/%s/follow" % q(b["username"]), None, a,
          200)
    write("a favorite of it", "POST", "/api/articles/%s/favorite" % q(slug), None, a, 200)
    out = write("its edit", "PUT", "/api/articles/%s" % q(slug),
                {"article": {"title": "Cache answers two", "tagList": [DATA["tags"][1]]}}, b, 200)
    slug2 = json.loads(out)["article"]["slug"]
    st, _ = request(ON, "GET", "/api/articles/%s" % q(slug), token=a["token"])
    if slug2 != slug and st != 404:
        print("DIFF the old slug answers %d after the edit" % st)
        global diffs
        diffs += 1
    write("its author's new bio", "PUT", "/api/user", {"user": {"bio": "new bio"}}, b, 200)
    write("its author's new name", "PUT", "/api/user",
          {"user": {"username": b["username"] + "x"}}, b, 200)
    b["username"] += "x"
    write("its delete", "DELETE", "/api/articles/%s" % q(slug2), None, b, 204)
    write("an unfollow", "DELETE", "/api/profiles/%s/follow" % q(DATA["authors"][0]), None, a,
          200)
    print("# %d answers compared, %d differed" % (compared, diffs))
    sys.exit(1 if diffs else 0)


main()
