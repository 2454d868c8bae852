"""
Clients of the tasks live tests (``test_wire_live.py``, ``test_legacy_live.py``,
``test_ownership_live.py``, ``test_limits_live.py``): a stateless 2026-07-28 client that declares
the ``io.modelcontextprotocol/tasks`` extension per request (SEP-2663) and a 2025-11-25 session
(MCP spec 2025-11-25, basic/utilities/tasks), optionally authenticated with the test app's
``X-Api-Key`` (tests/testapp/authentication.py), plus polling helpers. Every task a client makes
is remembered so a fixture can cancel what is still running: the shared live server allows only
``MAX_TASKS_PER_USER`` working tasks per principal, and every anonymous client is one principal.
"""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tests.live import ROOT, LiveServer, server_env
from tests.transports.sse_client import SSE, LegacySession, Reply, SSEStream, request


MODERN = "2026-07-28"
LEGACY = "2025-11-25"
EXTENSION = "io.modelcontextprotocol/tasks"
RELATED = "io.modelcontextprotocol/related-task"
TERMINAL = frozenset({"completed", "failed", "cancelled"})
ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}")
TASK_ID = re.compile(r"^[A-Za-z0-9_-]{22,64}$")
EXT_CAPS: dict[str, Any] = {"extensions": {EXTENSION: {}}}
_ids = itertools.count(1)
_UNSET: Any = object()


def create_users(env: Mapping[str, str], *usernames: str) -> None:
    """Create (if missing) active users in the live servers' database, from a process of its own."""
    code = ("import django; django.setup(); from django.contrib.auth import get_user_model; U = get_user_model(); "
            f"[U.objects.get_or_create(username=name) for name in {list(usernames)!r}]")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=server_env(env), timeout=60,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert result.returncode == 0, result.stdout


def answer_of(reply: Reply, request_id: Any) -> dict[str, Any]:
    """The JSON-RPC response to ``request_id``: the JSON body, or read from the SSE stream."""
    if reply.stream is None:
        assert isinstance(reply.body, dict), (reply.status, reply.raw[:500])
        return reply.body
    try:
        message, _ = reply.stream.wait_for(lambda m: m.get("id") == request_id and "method" not in m)
        return message
    finally:
        reply.stream.close()


@dataclass
class Answer:
    """One 2026-07-28 exchange: the HTTP status and the JSON-RPC response."""

    status: int
    message: dict[str, Any]

    @property
    def result(self) -> dict[str, Any]:
        assert self.status == 200 and "result" in self.message, (self.status, self.message)
        return self.message["result"]

    @property
    def error(self) -> dict[str, Any]:
        assert "error" in self.message, (self.status, self.message)
        return self.message["error"]


@dataclass
class Modern:
    """
    A stateless 2026-07-28 client (MCP spec 2026-07-28, basic/transports/streamable-http): every
    request carries ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` (the tool's name, or the
    ``taskId`` of ``tasks/*``) and ``_meta`` with the protocol version, the client's capabilities
    (by default the tasks extension) and its info.
    """

    server: LiveServer
    capabilities: dict[str, Any] = field(default_factory=lambda: dict(EXT_CAPS))
    api_key: str | None = None
    client_name: str = "tasks-live"
    made: list[str] = field(default_factory=list)

    def post(self, method: str, params: dict[str, Any] | None = None, *, capabilities: Any = _UNSET,
             name: Any = _UNSET, headers: Mapping[str, str] | None = None) -> Answer:
        params = dict(params or {})
        caps = self.capabilities if capabilities is _UNSET else capabilities
        meta = {"io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": caps,
                "io.modelcontextprotocol/clientInfo": {"name": self.client_name, "version": "1.0"}}
        params["_meta"] = {**meta, **params.get("_meta", {})}
        all_headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
        if name is _UNSET:
            name = params.get("name") if method == "tools/call" else params.get("taskId")
        if name is not None:
            all_headers["Mcp-Name"] = str(name)
        if self.api_key:
            all_headers["X-Api-Key"] = self.api_key
        all_headers.update(headers or {})
        request_id = f"m-{next(_ids)}"
        reply = request(self.server, "POST", {"jsonrpc": "2.0", "id": request_id, "method": method,
                                              "params": params}, all_headers)
        message = answer_of(reply, request_id)
        if method == "tools/call" and (message.get("result") or {}).get("resultType") == "task":
            self.made.append(message["result"]["taskId"])
        return Answer(reply.status, message)

    def call_tool(self, tool: str, arguments: dict[str, Any] | None = None, **kwargs: Any) -> Answer:
        extra = kwargs.pop("params", {})
        return self.post("tools/call", {"name": tool, "arguments": arguments or {}, **extra}, **kwargs)

    def start(self, tool: str, arguments: dict[str, Any] | None = None, **kwargs: Any) -> dict[str, Any]:
        """A ``tools/call`` that must come back as a ``CreateTaskResult``; that result."""
        result = self.call_tool(tool, arguments, **kwargs).result
        assert result.get("resultType") == "task", result
        return result

    def get(self, task_id: str, **kwargs: Any) -> dict[str, Any]:
        return self.post("tasks/get", {"taskId": task_id}, **kwargs).result

    def update(self, task_id: str, responses: Any, **kwargs: Any) -> Answer:
        return self.post("tasks/update", {"taskId": task_id, "inputResponses": responses}, **kwargs)

    def cancel(self, task_id: str, **kwargs: Any) -> Answer:
        return self.post("tasks/cancel", {"taskId": task_id}, **kwargs)

    def wait(self, task_id: str, statuses: Iterable[str] = TERMINAL, timeout: float = 10.0) -> dict[str, Any]:
        """Poll ``tasks/get`` until the status is one of ``statuses`` (or terminal); the last answer."""
        wanted = set(statuses) | TERMINAL
        deadline = time.monotonic() + timeout
        while True:
            task = self.get(task_id)
            if task["status"] in wanted:
                return task
            assert time.monotonic() < deadline, f"task {task_id} still {task['status']} after {timeout} s: {task}"
            time.sleep(0.05)

    def listen(self, notifications: dict[str, Any], *, capabilities: Any = _UNSET,
               request_id: str = "listen-1") -> Reply:
        """A ``subscriptions/listen`` request; the reply (an open SSE stream when accepted)."""
        caps = self.capabilities if capabilities is _UNSET else capabilities
        meta = {"io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": caps,
                "io.modelcontextprotocol/clientInfo": {"name": self.client_name, "version": "1.0"}}
        headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "subscriptions/listen"}
        if self.api_key:
            headers["X-Api-Key"] = self.api_key
        return request(self.server, "POST", {"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen",
                                             "params": {"notifications": notifications, "_meta": meta}}, headers)

    def cancel_all(self) -> None:
        """Cancel what this client made and may still be running (clean-up; errors ignored)."""
        for task_id in self.made:
            try:
                self.cancel(task_id)
            except Exception:  # noqa: BLE001 - clean-up only
                pass


class Session(LegacySession):
    """A 2025-11-25 session, optionally authenticated (``X-Api-Key``), remembering the tasks it makes."""

    api_key: str | None = None
    made: list[str]

    @classmethod
    def open(cls, server: LiveServer, *, api_key: str | None = None, capabilities: dict[str, Any] | None = None,
             version: str = LEGACY) -> Session:
        key_header = {"X-Api-Key": api_key} if api_key else {}
        reply = request(server, "POST", {
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": capabilities or {},
                       "clientInfo": {"name": "tasks-live-legacy", "version": "1.0"}}}, key_header)
        assert reply.status == 200, (reply.status, reply.body)
        assert reply.body["result"]["protocolVersion"] == version, reply.body
        session = cls(reply.headers["mcp-session-id"], reply.body["result"]["capabilities"], version=version)
        session.api_key = api_key
        session.made = []
        session.server = server
        initialized = request(server, "POST", {"jsonrpc": "2.0", "method": "notifications/initialized"},
                              session.headers())
        assert initialized.status == 202, (initialized.status, initialized.body)
        return session

    def headers(self) -> dict[str, str]:
        headers = super().headers()
        if self.api_key:
            headers["X-Api-Key"] = self.api_key
        return headers

    def rpc(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """One request on this session's server; its JSON-RPC response (JSON or SSE)."""
        message = self.message(method, params)
        reply = request(self.server, "POST", message, self.headers())
        assert reply.status == 200, (reply.status, reply.body)
        response = answer_of(reply, message["id"])
        if method == "tools/call" and isinstance((response.get("result") or {}).get("task"), dict):
            self.made.append(response["result"]["task"]["taskId"])
        return response

    def start(self, tool: str, arguments: dict[str, Any] | None = None, task: dict[str, Any] | None = None
              ) -> dict[str, Any]:
        """A task-augmented ``tools/call``; the ``task`` of its ``CreateTaskResult``."""
        response = self.rpc("tools/call", {"name": tool, "arguments": arguments or {},
                                           "task": {} if task is None else task})
        assert "result" in response and "task" in response["result"], response
        return response["result"]["task"]

    def get(self, task_id: str) -> dict[str, Any]:
        response = self.rpc("tasks/get", {"taskId": task_id})
        assert "result" in response, response
        return response["result"]

    def wait(self, task_id: str, statuses: Iterable[str] = TERMINAL, timeout: float = 10.0) -> dict[str, Any]:
        wanted = set(statuses) | TERMINAL
        deadline = time.monotonic() + timeout
        while True:
            task = self.get(task_id)
            if task["status"] in wanted:
                return task
            assert time.monotonic() < deadline, f"task {task_id} still {task['status']} after {timeout} s: {task}"
            time.sleep(0.05)

    def post_open(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], SSEStream]:
        """POST a request whose answer must come as an SSE stream; the message sent and the open stream."""
        message = self.message(method, params)
        reply = request(self.server, "POST", message, self.headers())
        assert reply.status == 200 and reply.stream is not None, (reply.status, reply.content_type, reply.body)
        return message, reply.stream

    def respond(self, request_id: Any, result: dict[str, Any]) -> None:
        """POST the client's JSON-RPC response to a server→client request (202)."""
        reply = request(self.server, "POST", {"jsonrpc": "2.0", "id": request_id, "result": result},
                        self.headers())
        assert reply.status == 202, (reply.status, reply.body)

    def open_get(self) -> SSEStream:
        reply = request(self.server, "GET", headers={"Accept": SSE, **self.headers()})
        assert reply.status == 200 and reply.stream is not None, (reply.status, reply.body)
        return reply.stream

    def cancel_all(self) -> None:
        for task_id in self.made:
            try:
                self.rpc("tasks/cancel", {"taskId": task_id})
            except Exception:  # noqa: BLE001 - clean-up only
                pass


def tool_text(result: dict[str, Any]) -> str:
    return result["content"][0]["text"]


def without_related(result: dict[str, Any]) -> dict[str, Any]:
    """A 2025-11-25 ``tasks/result`` result without its related-task ``_meta`` (and ``_meta`` if then empty)."""
    copy = dict(result)
    meta = {key: value for key, value in (copy.pop("_meta", None) or {}).items() if key != RELATED}
    if meta:
        copy["_meta"] = meta
    return copy
