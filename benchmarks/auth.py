"""
What a credential costs a request (issue 41): the 2026-07-28 ``tools/call echo`` of ``run.py``
with no credential, a personal access token (``PersonalAccessTokenAuthentication``: one indexed
read), an outside issuer's JWT (``ExternalTokenAuthentication``: a signature check, the keys
cached, and the ``ExternalIdentity`` read), and an outside issuer's opaque token whose
introspection answer is cached (the same read; the issuer is asked once a minute). Requests per
second and server CPU per request for each, and each one's ratio to the personal access token,
measured in the same run on daphne and on uvicorn.

    .venv/bin/python benchmarks/auth.py                    # c=1 and 32, 3 s a point, ≈2 min
    .venv/bin/python benchmarks/auth.py --repeat 3         # steadier

The outside issuer is a small HTTP server in this process (RFC 8414 metadata, a JWK Set, an RFC
7662 endpoint that knows one token): once its keys and its answer are cached, the timed requests
never reach it, and the script prints how often they did. Each server runs ``tests.settings`` on a
fresh SQLite file, trusting that issuer (``MCP_TEST_EXTERNAL_ISSUER``), on CPU 0; wrk (or
``loadgen.py``'s generator) on CPU 1. A measurement, not a test: it exits 0 once it has printed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `benchmarks` and `tests` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from jwcrypto import jwk, jwt

from benchmarks import loadgen, workload
from benchmarks.servers import LOAD_CPU, Server, have_uvicorn, pinned, stop_all
from tests.live import ROOT, fresh_sqlite_env, server_env

AUDIENCE = "bench-mcp"
OPAQUE = "opaque-bench-token-0123456789abcdef"
KEY = jwk.JWK.generate(kty="RSA", size=2048, kid="bench")
MODES = ("no credential", "personal access token", "JWT (outside issuer)", "opaque, introspection cached")


class Issuer:
    """The outside authorization server: metadata, keys and introspection; counts what it is asked."""

    def __init__(self) -> None:
        self.asked = {"keys": 0, "introspection": 0}
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def answer(self, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                if self.path == "/.well-known/oauth-authorization-server":
                    self.answer({"issuer": issuer.url, "jwks_uri": issuer.url + "/jwks",
                                 "introspection_endpoint": issuer.url + "/introspect"})
                elif self.path == "/jwks":
                    issuer.asked["keys"] += 1
                    self.answer({"keys": [KEY.export_public(as_dict=True)]})
                else:
                    self.send_error(404)

            def do_POST(self) -> None:  # noqa: N802
                issuer.asked["introspection"] += 1
                body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
                active = f"token={OPAQUE}" in body
                self.answer({"active": True, "sub": "bench-subject", "aud": AUDIENCE, "scope": "mcp:tools",
                             "exp": int(time.time()) + 3600} if active else {"active": False})

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def jwt(self) -> str:
        token = jwt.JWT(header={"alg": "RS256", "kid": "bench", "typ": "at+jwt"},
                        claims={"iss": self.url, "sub": "bench-subject", "aud": AUDIENCE, "scope": "mcp:tools",
                                "exp": int(time.time()) + 3600})
        token.make_signed_token(KEY)
        return token.serialize()


def personal_access_token(env: dict[str, str]) -> str:
    """A user ("bench") and a personal access token of theirs, in the servers' database."""
    code = ("import django; django.setup(); from django.contrib.auth import get_user_model; "
            "from django_mcp.oauth.models import PersonalAccessToken; "
            "user, _ = get_user_model().objects.get_or_create(username='bench'); "
            "print(PersonalAccessToken.issue(user, 'benchmark', 'mcp:tools')[1])")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=server_env(env), capture_output=True,
                          text=True, timeout=120, check=True)
    return done.stdout.strip().splitlines()[-1]


def specs(issuer: Issuer, pat: str) -> dict[str, workload.Spec]:
    base = workload.modern_call()
    credentials = {"no credential": None, "personal access token": pat, "JWT (outside issuer)": issuer.jwt(),
                   "opaque, introspection cached": OPAQUE}
    made = {}
    for mode, token in credentials.items():
        headers = dict(base.headers)
        if token:
            headers["Authorization"] = f"Bearer {token}"
        made[mode] = workload.Spec(base.method, base.path, headers, base.body)
    return made


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=3.0, help="seconds per measured point (default 3)")
    parser.add_argument("--repeat", type=int, default=1, help="interleaved repetitions, median reported (default 1)")
    parser.add_argument("--concurrency", default="1,32", help="comma-separated connection counts (default 1,32)")
    parser.add_argument("--servers", default="daphne,uvicorn", help="daphne, uvicorn or both (default both)")
    args = parser.parse_args()
    args.levels = [int(level) for level in args.concurrency.split(",") if level.strip()]
    args.kinds = [kind for kind in args.servers.split(",") if kind.strip()]
    if "uvicorn" in args.kinds and not have_uvicorn():
        print("  uvicorn not installed (pip install -e '.[bench]'), left out")
        args.kinds.remove("uvicorn")
    return args


def main() -> int:
    args = parse_args()
    generate = loadgen.run_wrk if loadgen.have_wrk() else loadgen.run_python
    prefix = pinned([], LOAD_CPU)
    issuer = Issuer()
    folder = Path(tempfile.mkdtemp(prefix="django-mcp-auth-bench-"))
    env = fresh_sqlite_env(folder)
    env["MCP_TEST_EXTERNAL_ISSUER"] = json.dumps({
        "issuer": issuer.url, "audience": AUDIENCE, "client_id": "bench", "client_secret": "bench-secret",
        "create_users": True})
    env["MCP_TEST_WITHOUT_METRICS"] = "1"
    pat = personal_access_token(env)
    requests = specs(issuer, pat)
    print(f"auth: {', '.join(MODES)}; servers {', '.join(args.kinds)}; c={args.concurrency}; "
          f"{args.duration:g} s a point, {args.repeat} repetition(s); load generator "
          f"{'wrk' if generate is loadgen.run_wrk else 'python'}")
    results: dict[tuple[str, str, int], list[loadgen.Result]] = {}
    try:
        for kind in args.kinds:
            server = Server(kind, "tests.asgi:application", f"auth-{kind}", env).start()
            for mode, spec in requests.items():
                problem = workload.check(server.port, spec)
                if problem:
                    raise RuntimeError(f"{mode} on {kind}: wrong answer before timing: {problem}")
                generate(prefix, spec, server.port, max(args.levels), 1.0)  # warm-up, discarded
            for _ in range(args.repeat):
                for conns in args.levels:
                    for mode, spec in requests.items():
                        cpu = server.cpu_seconds()
                        result = generate(prefix, spec, server.port, conns, args.duration)
                        result.server_cpu_s = server.cpu_seconds() - cpu
                        results.setdefault((kind, mode, conns), []).append(result)
            server.stop()
    finally:
        stop_all()
        issuer.server.shutdown()
    print(f"\n{'server':8} {'c':>3}  {'credential':30} {'req/s':>8} {'CPU us/req':>10} {'bad':>4}  vs PAT (req/s)")
    for kind in args.kinds:
        for conns in args.levels:
            rps = {mode: statistics.median(r.rps for r in results[(kind, mode, conns)]) for mode in MODES}
            for mode in MODES:
                runs = results[(kind, mode, conns)]
                cpu = statistics.median(r.cpu_us_per_request for r in runs)
                bad = sum(r.bad + r.errors for r in runs)
                print(f"{kind:8} {conns:>3}  {mode:30} {rps[mode]:8,.0f} {cpu:10,.0f} {bad:>4}  "
                      f"{rps[mode] / rps['personal access token']:.2f}x")
    print(f"\nthe outside issuer was asked for its keys {issuer.asked['keys']} time(s) and introspected "
          f"{issuer.asked['introspection']} time(s) in all (per server: once, then from the cache)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
