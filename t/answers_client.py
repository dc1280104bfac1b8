"""answers_client: the HTTP calls t/cache_answers.py and t/cache_kill.py
make (plain http.client, a new connection for every request, so that
successive requests reach any of an instance's workers)."""
import http.client
import json
import urllib.parse


def request(base, method, path, body=None, token=None, timeout=10):
    """(status, body bytes) of one request to the instance at base."""
    u = urllib.parse.urlsplit(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    headers = {"Connection": "close"}
    if token:
        headers["Authorization"] = "Token " + token
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    try:
        conn.request(method, path, data, headers)
        r = conn.getresponse()
        return (r.status, r.read())
    finally:
        conn.close()


def login(base, email, timeout=10):
    """The user object of a seeded user (every seeded password is
    "password"), signed in at base."""
    st, body = request(base, "POST", "/api/users/login",
                       {"user": {"email": email, "password": "password"}}, timeout=timeout)
    assert st == 200, (st, body)
    return json.loads(body)["user"]


def q(s):
    """s quoted as one path segment or query value."""
    return urllib.parse.quote(s, safe="")
