"""
Issue 28 ("push at scale"), on real servers: each daphne worker now hears the notification groups
through one channel of its own and hands each notification to its streams in process. That is
only safe if three things still hold, which the issue asks to be shown on two real workers
(PostgreSQL, Redis, real sockets, no mocks):

1. A client's answer to a server→client request still finds its way when the worker holding the
   request is busy with many streams: an elicitation answer POSTed to worker B reaches the tool
   waiting on worker A while 500 other streams are open there, and those 500 streams then hear a
   broadcast exactly once each.
2. A Redis restart under open streams leaves no stream deaf: each one either carries on (it hears
   a broadcast published after the restart) or ends, so its client reconnects; the reconnected
   streams and new sessions on either worker work; Redis shows the worker back in the broadcast
   group; and the workers log no traceback other than the expected "layer unavailable" warnings
   about Redis being unreachable.
3. The last stream of a worker leaving a resource's group while updates to that resource are in
   flight, with another stream joining right behind it, neither loses the newcomer's
   notifications nor doubles them, and leaves no stray channel in the group at Redis.

Publishing is done by a third process (``Publisher`` below) that lives for the whole test, so a
round costs a pipe write instead of an interpreter start. List changes go through
``anotify_list_changed``; resource updates are the event ``anotify_resource_updated`` sends, with
a mark in the notification's ``_meta`` so the test can tell one publish from another.

The Redis restart runs last: it starts a Redis and two workers of its own, and is the slowest.
"""

from __future__ import annotations

import http.client
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from django_mcp.fanout import BROADCAST_GROUP, resource_group
from tests.conftest import in_ci
from tests.live import ROOT, LiveServer, free_port, server_env
from tests.transports.sse_client import LegacySession, SSEStream, request
from tests.transports.workers import Workers, own_redis_prefix, tool_text, two_workers


MODERN = "2026-07-28"
OPENERS = 16
TOOLS = "notifications/tools/list_changed"
PROMPTS = "notifications/prompts/list_changed"
UPDATED = "notifications/resources/updated"
MARK = "tests/mark"
REDIS_SERVER = "/usr/bin/redis-server"


# --- a third process that publishes on request ------------------------------------------------------


_PUBLISHER = r"""
import asyncio, json, sys
import django
django.setup()
from django_mcp.fanout import NOTIFY, publish, resource_group
from django_mcp.notifications import anotify_list_changed

MARK = %(mark)r


def say(**reply):
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()


async def marked(uri, mark):
    # What anotify_resource_updated sends, with a mark the test can count.
    await publish(resource_group(uri), {
        "type": NOTIFY, "kind": "resource", "uri": uri, "visibility": {"uris": [uri]},
        "message": {"jsonrpc": "2.0", "method": "notifications/resources/updated",
                    "params": {"uri": uri, "_meta": {MARK: mark}}}})


async def burst(command):
    for index, mark in enumerate(command["marks"]):
        await marked(command["uri"], mark)
        if index == 0:
            say(started=command["tag"])
        await asyncio.sleep(command["pause"])
    say(done=command["tag"])


async def main():
    loop = asyncio.get_running_loop()
    running = set()
    say(ready=True)
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        command = json.loads(line)
        if command["op"] == "list":
            for kind in command["kinds"]:
                await anotify_list_changed(kind)
            say(done=command["tag"])
        elif command["op"] == "resource":
            for mark in command["marks"]:
                await marked(command["uri"], mark)
            say(done=command["tag"])
        elif command["op"] == "burst":
            task = asyncio.ensure_future(burst(command))
            running.add(task)
            task.add_done_callback(running.discard)
    for task in list(running):
        await task


asyncio.run(main())
""" % {"mark": MARK}


class Publisher:
    """``django.setup()`` once in a child process on the workers' services, then publish on request."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", _PUBLISHER], cwd=ROOT, env=server_env(env),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, bufsize=1)
        self.replies: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.output: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.expect("ready", True, timeout=60)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.output.append(line)
            if line.startswith("{"):
                self.replies.put(json.loads(line))
        self.replies.put(None)

    def expect(self, key: str, value: Any, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                reply = self.replies.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"the publisher did not say {key}={value!r} in {timeout:g} s:\n"
                                     + "".join(self.output[-40:])) from None
            if reply is None:
                raise AssertionError("the publisher exited:\n" + "".join(self.output[-40:]))
            if reply.get(key) == value:
                return

    def _send(self, **command: Any) -> str:
        tag = command["tag"] = uuid.uuid4().hex[:8]
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()
        return tag

    def list_changed(self, *kinds: str) -> None:
        """Publish list-changed notifications, in order; returns once they were sent."""
        self.expect("done", self._send(op="list", kinds=list(kinds)))

    def resource(self, uri: str, *marks: str) -> None:
        """Publish one marked update of ``uri`` per mark, in order; returns once they were sent."""
        self.expect("done", self._send(op="resource", uri=uri, marks=list(marks)))

    def burst(self, uri: str, marks: list[str], pause: float) -> str:
        """Start publishing marked updates ``pause`` s apart; returns once the first was sent."""
        tag = self._send(op="burst", uri=uri, marks=marks, pause=pause)
        self.expect("started", tag)
        return tag

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def __enter__(self) -> Publisher:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


# --- streams ---------------------------------------------------------------------------------------


def open_listen(server: LiveServer, notifications: dict[str, Any] | None = None) -> SSEStream:
    """A 2026-07-28 ``subscriptions/listen`` stream, returned once it is acknowledged (and joined)."""
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "fanout-live-test", "version": "1.0"}}
    message = {"jsonrpc": "2.0", "id": f"listen-{uuid.uuid4().hex[:8]}", "method": "subscriptions/listen",
               "params": {"notifications": notifications or {"toolsListChanged": True, "promptsListChanged": True},
                          "_meta": meta}}
    reply = request(server, "POST", message, {"MCP-Protocol-Version": MODERN, "Mcp-Method": "subscriptions/listen"})
    assert reply.status == 200 and reply.stream is not None, (reply.status, reply.body)
    assert reply.stream.next_message()["method"] == "notifications/subscriptions/acknowledged"
    return reply.stream


@dataclass
class Held:
    """One open stream of a client: a legacy session's GET stream, or a listen stream."""

    kind: str  # "get" or "listen"
    stream: SSEStream
    session: LegacySession | None = None

    @classmethod
    def open(cls, server: LiveServer, kind: str) -> Held:
        if kind == "get":
            session = LegacySession.start(server)
            return cls(kind, session.open_get_stream(server), session)
        return cls(kind, open_listen(server))

    def reconnect(self, server: LiveServer) -> None:
        """What a client does when its stream ended: a new GET for the same session, or a new listen."""
        self.stream.close()
        self.stream = self.session.open_get_stream(server) if self.session else open_listen(server)


def open_many(server: LiveServer, kinds: list[str]) -> list[Held]:
    with ThreadPoolExecutor(OPENERS) as pool:
        return list(pool.map(lambda kind: Held.open(server, kind), kinds))


def close_all(held: list[Held]) -> None:
    for one in held:
        one.stream.close()


def heard(stream: SSEStream, count: int, timeout: float = 30) -> list[str]:
    """The methods of the next ``count`` messages; the reason, in parentheses, where one did not come."""
    methods = []
    for _ in range(count):
        try:
            methods.append(stream.next_message(timeout)["method"])
        except AssertionError as exc:
            methods.append(f"({exc})")
            break
    return methods


def mark_of(message: dict[str, Any]) -> str | None:
    return ((message.get("params") or {}).get("_meta") or {}).get(MARK)


# --- logs and Redis --------------------------------------------------------------------------------


def tracebacks(server: LiveServer) -> list[tuple[str, str]]:
    """
    Each traceback in the worker's log, as the line that introduced it (the log message it belongs
    to) and the exception finally raised (the last one of a chain).
    """
    assert server.log_path is not None
    lines = server.log_path.read_text(errors="replace").splitlines()
    chained = ("During handling of the above exception", "The above exception was")
    found = []
    for index, line in enumerate(lines):
        if not line.startswith("Traceback (most recent call last):"):
            continue
        if index >= 2 and lines[index - 2].startswith(chained):
            continue  # part of the chain found from its first traceback
        at = index + 1
        while True:
            while at < len(lines) and lines[at][:1].isspace():
                at += 1  # the frames
            exception = lines[at] if at < len(lines) else ""
            if at + 4 < len(lines) and lines[at + 2].startswith(chained) and lines[at + 4].startswith("Traceback"):
                at += 5
                continue
            break
        found.append((lines[index - 1] if index else "", exception))
    return found


def redis_client(port: int = 6379) -> Any:
    import redis

    return redis.Redis(host="127.0.0.1", port=port, socket_timeout=5, socket_connect_timeout=5)


def group_key(env: Mapping[str, str], group: str) -> str:
    """channels_redis's key for a group's members (a sorted set of channel names)."""
    return f"{env['MCP_TEST_REDIS_PREFIX']}:group:{group}"


def settle(check: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


# --- fixtures --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def own_layer(services: Mapping[str, str]) -> Mapping[str, str]:
    return own_redis_prefix(services, "fanout_live")


@pytest.fixture(scope="module")
def workers(own_layer: Mapping[str, str]) -> Iterator[Workers]:
    with two_workers(own_layer, keepalive="5", prefix="fanout") as started:
        yield started


@pytest.fixture(scope="module")
def publisher(workers: Workers) -> Iterator[Publisher]:
    with Publisher(workers.env) as started:
        yield started


@pytest.fixture
def logs(workers: Workers) -> Iterator[None]:
    print(workers.describe())
    yield


# --- 1. an elicitation answer through the other worker, 500 streams open -----------------------------


def test_elicitation_answer_posted_to_b_while_500_streams_are_open_on_a(
        workers: Workers, publisher: Publisher, logs: None) -> None:
    """
    500 idle streams on worker A (250 legacy GET streams, 250 2026-07-28 listen streams); a legacy
    session on A calls ``ask_name``, reads ``elicitation/create`` from the POST's SSE stream and
    POSTs its answer to worker B with the same ``Mcp-Session-Id``. B relays it to A over the
    session's group; the tool's result, with the answer's content, arrives on A's stream. The 500
    streams are all still open afterwards and hear a broadcast exactly once: each one's next two
    messages are that broadcast and a second one published after it (a doubled first one would
    show up in second place).
    """
    a, b = workers.a, workers.b
    started = time.monotonic()
    idle = open_many(a, ["get", "listen"] * 250)
    print(f"500 streams open on worker A in {time.monotonic() - started:.1f} s")
    try:
        session = LegacySession.start(a, client_capabilities={"elicitation": {}})
        call = session.message("tools/call", {"name": "ask_name", "arguments": {}})
        reply = request(a, "POST", call, session.headers())
        assert reply.status == 200 and reply.stream is not None, (reply.status, reply.content_type, reply.body)
        try:
            elicit, _ = reply.stream.wait_for(lambda m: "method" in m and "id" in m, timeout=30)
            assert elicit["method"] == "elicitation/create", elicit
            name = f"Grace-{uuid.uuid4().hex[:6]}"
            answer = {"jsonrpc": "2.0", "id": elicit["id"], "result": {"action": "accept", "content": {"name": name}}}
            accepted = request(b, "POST", answer, session.headers())
            assert accepted.status == 202, (accepted.status, accepted.body)
            final, _ = reply.stream.wait_for(lambda m: m.get("id") == call["id"], timeout=30)
            assert tool_text(final) == f"Hello, {name}!", final
            assert final["result"]["isError"] is False
        finally:
            reply.stream.close()

        publisher.list_changed("tools", "prompts")
        wrong = [(index, one.kind, methods) for index, one in enumerate(idle)
                 if (methods := heard(one.stream, 2)) != [TOOLS, PROMPTS]]
        assert not wrong, f"{len(wrong)} of {len(idle)} streams heard otherwise, e.g. {wrong[:3]}"
    finally:
        close_all(idle)
    assert [tb for server in (a, b) for tb in tracebacks(server)] == []


# --- 3. the last member leaving a resource's group while a publish is in flight ----------------------


ROUNDS = 50
BURST = 25
URI = "memo://items/fanout-race"


def subscribed_session(server: LiveServer, subscribe_on: LiveServer) -> LegacySession:
    session = LegacySession.start(server)
    subscribed = session.call(subscribe_on, "resources/subscribe", {"uri": URI})
    assert subscribed.get("result") == {}, subscribed
    return session


def test_last_member_leaving_a_resource_group_while_publishing(
        workers: Workers, publisher: Publisher, own_layer: Mapping[str, str], logs: None) -> None:
    """
    50 rounds on worker A: the GET stream of a session subscribed to a resource is the worker's
    only member of that resource's group. A third process starts publishing updates of the
    resource (25, 3 ms apart); once the stream has heard the first, the client closes it — the
    worker leaves the group while updates are in flight — and at once (after 0-20 ms, varying by
    round) opens the GET stream of a second session subscribed to the same resource (subscribed
    on A or on B, alternately). Once that stream is open and the burst is over, one more update
    is published, then a sentinel: the stream must hear that update exactly once, and nothing
    from an earlier round or twice (updates of the burst may arrive, each once). That stream is
    the next round's one to close. At the end Redis holds just worker A's channel in the
    resource's group (the one it also has in the broadcast group), none once the last stream
    closed, and neither worker logged a traceback.
    """
    a, b = workers.a, workers.b
    members = redis_client()
    resource_key, broadcast_key = group_key(own_layer, resource_group(URI)), group_key(own_layer, BROADCAST_GROUP)
    current = subscribed_session(a, a).open_get_stream(a)
    overlapped = 0
    try:
        for round_ in range(ROUNDS):
            prefix = f"r{round_}-"
            following = subscribed_session(a, (a, b)[round_ % 2])
            burst = publisher.burst(URI, [f"{prefix}b{n}" for n in range(BURST)], pause=0.003)
            first = current.next_message()
            assert first["method"] == UPDATED and (mark_of(first) or "").startswith(prefix), (round_, first)
            current.close()  # the worker's last member of the group leaves while updates arrive
            time.sleep((round_ % 5) * 0.005)
            current = following.open_get_stream(a)
            publisher.expect("done", burst)
            probe, sentinel = f"{prefix}probe", f"{prefix}sentinel"
            publisher.resource(URI, probe, sentinel)
            _, before = current.wait_for(lambda m: mark_of(m) == sentinel)
            marks = [mark_of(m) for m in before]
            assert marks.count(probe) == 1, (round_, marks)
            assert len(set(marks)) == len(marks) and all(m and m.startswith(prefix) for m in marks), (round_, marks)
            overlapped += len(marks) > 1  # it joined while the burst was still being published
        print(f"{overlapped} of {ROUNDS} new streams joined while the burst was still being published")
        on_a = set(members.zrange(resource_key, 0, -1))
        assert len(on_a) <= 1 and on_a <= set(members.zrange(broadcast_key, 0, -1)), \
            (on_a, members.zrange(broadcast_key, 0, -1))
    finally:
        current.close()
    try:
        assert settle(lambda: members.zcard(resource_key) == 0, 5), members.zrange(resource_key, 0, -1)
    finally:
        members.close()
    assert [(server.name, tb) for server in (a, b) for tb in tracebacks(server)] == []


# --- 2. Redis restarted under open streams --------------------------------------------------------


class PrivateRedis:
    """A ``redis-server`` of this test's own, on a free port, without persistence (a restart forgets all)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.directory), "--logfile", str(self.directory / "redis.log")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        client = redis_client(self.port)
        try:
            assert settle(lambda: self._pings(client), 10), f"redis-server on port {self.port} did not start"
        finally:
            client.close()

    @staticmethod
    def _pings(client: Any) -> bool:
        try:
            return bool(client.ping())
        except Exception:
            return False

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    if not os.access(REDIS_SERVER, os.X_OK):
        reason = f"needs {REDIS_SERVER} to restart a Redis of the test's own"
        if in_ci():
            pytest.fail(f"CI=true but {reason}", pytrace=False)
        pytest.skip(reason=reason)
    server = PrivateRedis(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def outcome(stream: SSEStream, deadline: float) -> str:
    """How a stream fared after the restart: "carried" (a message came), "ended" (closed), or neither."""
    try:
        while True:
            event = stream.next_event(deadline, idle=True)
            if event is None:
                return "ended"
            if event.get("data"):
                return "carried"
    except AssertionError:
        return "silent"
    except (OSError, http.client.HTTPException) as exc:
        return f"broken ({exc!r})"


# What a worker may log, with a traceback, about a Redis that is away: a reader giving up on the layer
# (its streams then end, so their clients reconnect), the session cache's listener pausing, and a
# group the worker could not join again or leave. Expected only with the exception that says Redis
# was unreachable (redis-py's ConnectionError), not with any other.
LAYER_AWAY_WARNINGS = ("Channel layer unreachable", "Session announcements unavailable", "Could not join",
                       "Could not leave channel group")
LAYER_AWAY_EXCEPTION = "redis.exceptions.ConnectionError"
# How long after Redis is back every stream must have carried on or ended: a reader gives up on
# the layer after about 6 s of failed reads (layer_reading.READER_ATTEMPTS), plus room for a
# loaded 2-core machine.
RECOVERY_SECONDS = 15.0


def test_streams_carry_on_or_end_when_redis_restarts(services: Mapping[str, str], private_redis: PrivateRedis) -> None:
    """
    100 streams on worker A (50 GET, 50 listen) on a Redis of the test's own; a broadcast reaches
    them all. Redis is stopped (SIGTERM), and a second later started again on the same port,
    empty. Within 15 s of its return every stream must either carry on — hear a broadcast
    published after the restart (one goes out every 1.5 s until each stream has an outcome, so a
    worker that takes a moment to rejoin is not failed for it) — or end, so its client reconnects;
    a stream still open and deaf by then fails. The ended ones reconnect (a new GET for the same
    session, a new listen stream); Redis holds worker A's channel in the broadcast group again;
    a new session works on each worker; every stream, old and new, hears the next broadcast; and
    neither worker logged a traceback other than a "layer away" warning caused by Redis being
    unreachable (a redis-py ConnectionError).
    """
    env = {**own_redis_prefix(services, "fanout_restart"), "MCP_TEST_REDIS_PORT": str(private_redis.port)}
    with two_workers(env, keepalive="2", prefix="fanout-restart") as workers:
        print(workers.describe())
        a, b = workers.a, workers.b
        key = group_key(workers.env, BROADCAST_GROUP)
        held = open_many(a, ["get", "listen"] * 50)
        extra: list[Held] = []
        try:
            with Publisher(workers.env) as publisher:
                publisher.list_changed("tools")
            before = [(index, methods) for index, one in enumerate(held)
                      if (methods := heard(one.stream, 1)) != [TOOLS]]
            assert not before, f"before the restart, {len(before)} streams heard otherwise: {before[:3]}"

            private_redis.stop()
            time.sleep(1.0)
            private_redis.start()
            deadline = time.monotonic() + RECOVERY_SECONDS

            with Publisher(workers.env) as publisher, ThreadPoolExecutor(len(held)) as pool:
                futures = [pool.submit(outcome, one.stream, deadline) for one in held]
                while time.monotonic() < deadline:
                    publisher.list_changed("tools")
                    if not wait(futures, timeout=1.5).not_done:
                        break
                members = redis_client(private_redis.port)
                try:
                    in_group = members.zrange(key, 0, -1)
                finally:
                    members.close()
                outcomes = [future.result() for future in futures]
            tally = {name: outcomes.count(name) for name in sorted(set(outcomes))}
            print(f"{RECOVERY_SECONDS - (deadline - time.monotonic()):.1f} s after Redis came back: {tally}; "
                  f"broadcast group {in_group}")
            deaf = [(index, held[index].kind, result) for index, result in enumerate(outcomes)
                    if result not in ("carried", "ended")]
            assert not deaf, (f"{len(deaf)} of {len(held)} streams neither carried on nor ended within "
                              f"{RECOVERY_SECONDS:g} s of Redis coming back: {deaf[:3]}...; outcomes {tally}; "
                              f"members of the broadcast group then: {in_group}")

            for one, result in zip(held, outcomes):
                if result == "ended":
                    one.reconnect(a)
            members = redis_client(private_redis.port)
            try:
                # Worker A's channel, and only it: B holds no stream yet.
                assert settle(lambda: members.zcard(key) == 1, 5), \
                    f"broadcast group members after the restart: {members.zrange(key, 0, -1)}"
            finally:
                members.close()

            for server in (a, b):
                fresh = LegacySession.start(server)
                echoed = fresh.call(server, "tools/call", {"name": "echo", "arguments": {"text": "back"}})
                assert tool_text(echoed) == "back", echoed
                extra.append(Held("get", fresh.open_get_stream(server), fresh))
            extra.append(Held("listen", open_listen(b)))
            with Publisher(workers.env) as publisher:
                publisher.list_changed("prompts")
            missed = []
            for index, one in enumerate(held + extra):
                try:
                    one.stream.wait_for(lambda m: m.get("method") == PROMPTS, timeout=15)
                except AssertionError as exc:
                    missed.append((index, one.kind, str(exc)))
            assert not missed, f"{len(missed)} streams missed the broadcast after the restart: {missed[:5]}"
        finally:
            close_all(held + extra)
        found = [(server.name, heading, exception) for server in (a, b) for heading, exception in tracebacks(server)]
        print(f"tracebacks in the worker logs: {len(found)}, " + ", ".join(sorted({e for _, _, e in found})))
        unexpected = [(name, heading, exception) for name, heading, exception in found
                      if not (any(warning in heading for warning in LAYER_AWAY_WARNINGS)
                              and exception.startswith(LAYER_AWAY_EXCEPTION))]
        assert not unexpected, f"{len(unexpected)} unexpected tracebacks in the worker logs: {unexpected[:4]}"
