"""
Model resources over real HTTP: a daphne server serving the catalogue site
(``MCP_TEST_SITE=tests.catalogue.sites.site``, tests/catalogue/mcp.py) on SQLite, driven by the
official ``mcp`` SDK client in both eras (``legacy``: 2025-11-25 sessions; ``2026-07-28``:
stateless). Users are told apart by the test app's API keys (``X-Api-Key: <user>-key``); the
Django admin of the same server saves rows, as staff would.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import subprocess
import sys
import warnings
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager
from typing import Any


import httpx2
import mcp_types as types
import pytest
from mcp import Client, MCPDeprecationWarning, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.client.subscriptions import ResourceUpdated, SubscriptionLost

from tests.live import ROOT, LiveServer, migrate, server_env


pytestmark = pytest.mark.live

TIMEOUT = 60
ENTRIES = 10_000
MODES = ["legacy", "2026-07-28"]


def catalogue_env(directory: Any, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    return {"MCP_TEST_SITE": "tests.catalogue.sites.site", "MCP_TEST_MEDIA_ROOT": str(directory / "media"),
            "DJANGO_SETTINGS_MODULE": "tests.settings", **(extra or {})}


def fill(env: Mapping[str, str], entries: int) -> None:
    """Create the catalogue's users and rows in the server's database, from another process."""
    result = subprocess.run([sys.executable, "-m", "tests.catalogue.setup", str(entries)], cwd=ROOT,
                            env=server_env(env), capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    directory = tmp_path_factory.mktemp("catalogue")
    env = catalogue_env(directory, {"MCP_TEST_DATABASE": "sqlite", "MCP_TEST_SQLITE": str(directory / "db.sqlite3"),
                                    "MCP_TEST_CHANNEL_LAYER": "memory"})
    migrate(env)
    fill(env, ENTRIES)
    with LiveServer(env=env, name="catalogue") as live:
        yield live


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


@asynccontextmanager
async def connect(server: LiveServer, mode: str, user: str | None = None, **options: Any) -> AsyncIterator[Client]:
    """The SDK client, as ``user`` (through the API-key header) or anonymous."""
    headers = {"X-Api-Key": f"{user}-key"} if user else {}
    # The SDK's own client settings (a 300 s read timeout for streams), as a deployed client has
    # them: httpx's 5 s default would end a quiet legacy GET stream on a stall of the test machine,
    # and the SDK gives that stream up for good after two such errors.
    http = create_mcp_http_client(headers=headers)
    async with asyncio.timeout(TIMEOUT), http, Client(streamable_http_client(server.mcp_url, http_client=http),
                                                      mode=mode, **options) as client:
        yield client


async def every_resource(client: Client) -> list[types.Resource]:
    found, cursor = [], None
    while True:
        page = await client.list_resources(cursor=cursor)
        found += page.resources
        if not (cursor := page.next_cursor):
            return found


def row(result: types.ReadResourceResult) -> dict[str, Any]:
    [contents] = result.contents
    assert contents.mime_type == "application/json"
    return json.loads(contents.text)


async def test_paging_through_ten_thousand_rows_gives_each_exactly_once(server: LiveServer, mode: str) -> None:
    async with connect(server, mode) as client:
        entries = [r.uri for r in await every_resource(client) if str(r.uri).startswith("catalogue://entry/")
                   and not str(r.uri).endswith("$schema")]
    assert len(entries) == ENTRIES and len(set(entries)) == ENTRIES


async def test_read_a_row_its_links_its_file_and_complete_its_keys(server: LiveServer, mode: str) -> None:
    async with connect(server, mode, "bob") as client:
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        assert {"catalogue://volume/{pk}", "catalogue://volume/{pk}/scan", "catalogue://writer/{slug}"} <= templates
        volumes = [r for r in await every_resource(client) if re.fullmatch(r"catalogue://volume/\d+", str(r.uri))]
        earthsea_uri = next(str(r.uri) for r in volumes if r.name == "A Wizard of Earthsea")
        earthsea = row(await client.read_resource(earthsea_uri))
        assert earthsea["writer"] == "catalogue://writer/le-guin" and earthsea["price"] == "9.99"
        assert row(await client.read_resource(earthsea["writer"]))["name"] == "Ursula K. Le Guin"
        [scan] = (await client.read_resource(earthsea["scan"])).contents
        assert isinstance(scan, types.BlobResourceContents) and scan.mime_type == "application/pdf"
        assert scan.blob and json.dumps(scan.blob)  # base64 text
        completion = await client.complete(types.ResourceTemplateReference(type="ref/resource",
                                                                           uri="catalogue://writer/{slug}"),
                                           {"name": "slug", "value": "le"})
        assert completion.completion.values == ["le-guin"]


async def test_two_users_see_only_their_own_rows(server: LiveServer, mode: str) -> None:
    async with connect(server, mode, "alice") as alice:
        theirs = {r.name: str(r.uri) for r in await every_resource(alice)}
    diary = theirs["Alice's diary"]
    async with connect(server, mode, "bob") as bob:
        assert "Alice's diary" not in {r.name for r in await every_resource(bob)}
        with pytest.raises(MCPError) as refused:
            await bob.read_resource(diary)
        # Not found, in the era's spelling: a hidden row and a missing one look the same.
        assert refused.value.error.code == (-32002 if mode == "legacy" else -32602)
        search = await bob.call_tool("search_volume", {"query": "diary"})
        assert search.structured_content == {"results": []}
    async with connect(server, mode, "nobody") as nobody:
        assert not [r for r in await every_resource(nobody) if str(r.uri).startswith("catalogue://volume/")]
        assert "search_volume" not in {tool.name for tool in (await nobody.list_tools()).tools}


async def test_generated_tools_return_what_reading_returns(server: LiveServer, mode: str) -> None:
    async with connect(server, mode, "bob") as client:
        found = await client.call_tool("search_volume", {"query": "earthsea"})
        [result] = found.structured_content["results"]
        links = [block for block in found.content if isinstance(block, types.ResourceLink)]
        assert [str(link.uri) for link in links] == [f"catalogue://volume/{result['id']}"]
        assert row(await client.read_resource(str(links[0].uri))) == result
        got = await client.call_tool("get_volume", {"pk": result["id"]})
        assert got.structured_content == result


# Change notifications ----------------------------------------------------------------------------


class AdminBrowser:
    """Staff in the Django admin of the live server, over plain HTTP with a session cookie."""

    def __init__(self, base_url: str) -> None:
        self.http = httpx2.Client(base_url=base_url, timeout=20, follow_redirects=False)
        page = self.http.get("/admin/login/")
        answer = self.http.post("/admin/login/", data={"username": "admin", "password": "admin-pass",
                                                       "csrfmiddlewaretoken": self.token(page.text),
                                                       "next": "/admin/"})
        assert answer.status_code == 302, answer.text[:500]

    @staticmethod
    def token(html: str) -> str:
        return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)

    def pk_of(self, title: str) -> int:
        page = self.http.get("/admin/catalogue/volume/", params={"q": title})
        return int(re.search(r'href="/admin/catalogue/volume/(\d+)/change/', page.text).group(1))

    def save_volume(self, pk: int, **fields: Any) -> None:
        """Submit the change form with ``fields`` (title, pages, secret, owner)."""
        form = self.http.get(f"/admin/catalogue/volume/{pk}/change/")
        data = {"csrfmiddlewaretoken": self.token(form.text), "_save": "Save", **fields}
        if not data.pop("secret", False):
            data.pop("secret", None)
        else:
            data["secret"] = "on"
        answer = self.http.post(f"/admin/catalogue/volume/{pk}/change/", data=data)
        assert answer.status_code == 302, answer.text[:2000]

    def close(self) -> None:
        self.http.close()


def user_pk(env: Mapping[str, str], username: str) -> int:
    code = ("import django; django.setup(); from django.contrib.auth.models import User; "
            f"print(User.objects.get(username={username!r}).pk)")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=server_env(env), capture_output=True,
                            text=True, timeout=60, check=True)
    return int(result.stdout.strip())


class Watcher:
    """One user's client, subscribed to one URI in the client's era, collecting what arrives."""

    def __init__(self, server: LiveServer, mode: str, user: str, uri: str) -> None:
        self.server, self.mode, self.user, self.uri = server, mode, user, uri
        self.updates: list[str] = []
        self.arrived = asyncio.Event()
        self.ready = asyncio.Event()

    async def on_message(self, message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.updates.append(str(message.params.uri))
            self.arrived.set()

    async def run(self, stop: asyncio.Event) -> None:
        async with connect(self.server, self.mode, self.user, message_handler=self.on_message) as client:
            if self.mode == "legacy":
                with warnings.catch_warnings():  # the legacy method is the point here
                    warnings.simplefilter("ignore", MCPDeprecationWarning)
                    await client.subscribe_resource(self.uri)
                self.ready.set()
                await stop.wait()
                return
            async with client.listen(resource_subscriptions=[self.uri]) as subscription:
                assert subscription.honored.resource_subscriptions == [self.uri]
                self.ready.set()
                reader = asyncio.ensure_future(self._read(subscription))
                await stop.wait()
                reader.cancel()

    async def _read(self, subscription: Any) -> None:
        try:
            async for event in subscription:
                if isinstance(event, ResourceUpdated):
                    self.updates.append(event.uri)
                    self.arrived.set()
        except SubscriptionLost:
            pass  # the test closed the client


class SdkClientLog(logging.Handler):
    """What the SDK's streamable HTTP client logs (GET stream opened, failed, given up), for a failure message."""

    LOGGER = "mcp.client.streamable_http"

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.level_before = logging.NOTSET

    @classmethod
    def attach(cls) -> SdkClientLog:
        handler, logger = cls(), logging.getLogger(cls.LOGGER)
        handler.level_before = logger.level
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
        return handler

    def detach(self) -> None:
        logger = logging.getLogger(self.LOGGER)
        logger.removeHandler(self)
        logger.setLevel(self.level_before)

    def emit(self, record: logging.LogRecord) -> None:
        if "Sending client message" in record.getMessage():
            return  # every request: noise beside what happened to the streams
        line = f"{record.levelname} {record.getMessage()}"
        if record.exc_info and record.exc_info[1] is not None:
            line += f" ({record.exc_info[1]!r})"
        self.lines.append(line)

    def text(self) -> str:
        return "\n".join(self.lines[-40:]) or "(nothing)"


async def saved_until_seen(admin: AdminBrowser, pk: int, watchers: list[Watcher], **fields: Any) -> None:
    """Save through the admin until every watcher has an update (a legacy GET stream opens in the background)."""
    for attempt in range(10):
        await asyncio.to_thread(admin.save_volume, pk, **{**fields, "pages": 200 + attempt})
        try:
            await asyncio.wait_for(asyncio.gather(*(w.arrived.wait() for w in watchers)), 1.5)
            return
        except TimeoutError:
            continue
    raise AssertionError(f"updates never arrived: {[(w.user, w.updates) for w in watchers]}")


async def watch_admin_saves(server: LiveServer, admin_server: LiveServer, mode: str, env: Mapping[str, str]) -> None:
    """
    Alice and Bob subscribe to one public volume (through ``server``); staff save it in the admin
    of ``admin_server``: both hear of it. Staff then make it Alice's secret: only she hears of that.
    """
    title = f"Notify {mode}"
    admin = await asyncio.to_thread(AdminBrowser, admin_server.url)
    client_log = SdkClientLog.attach()
    try:
        pk = await asyncio.to_thread(admin.pk_of, title)
        uri = f"catalogue://volume/{pk}"
        alice, bob = Watcher(server, mode, "alice", uri), Watcher(server, mode, "bob", uri)
        stop = asyncio.Event()
        tasks = [asyncio.ensure_future(w.run(stop)) for w in (alice, bob)]
        try:
            await asyncio.wait_for(asyncio.gather(alice.ready.wait(), bob.ready.wait()), TIMEOUT)
            try:
                await saved_until_seen(admin, pk, [alice, bob], title=title, secret=False, owner="")
            except AssertionError as exc:
                # What the workers logged (a refused GET stream, a failed visibility check) and what
                # the SDK said of its GET streams (an error, a give-up) tell a missing stream from a
                # dropped notification.
                logs = "\n".join(f"--- {s!r}\n{s.log_tail(60)}" for s in dict.fromkeys((server, admin_server)))
                raise AssertionError(f"{exc}\n--- the SDK client\n{client_log.text()}\n{logs}") from None
            assert set(alice.updates) == set(bob.updates) == {uri}
            seen_by_bob = len(bob.updates)
            alice.arrived.clear()
            alice_pk = await asyncio.to_thread(user_pk, env, "alice")
            await saved_until_seen(admin, pk, [alice], title=title, secret=True, owner=str(alice_pk))
            await asyncio.sleep(1.0)  # time for a wrong delivery to arrive too
            assert len(bob.updates) == seen_by_bob, "bob heard of a row he may not see"
        finally:
            stop.set()
            await asyncio.wait_for(asyncio.gather(*tasks), TIMEOUT)
    finally:
        client_log.detach()
        await asyncio.to_thread(admin.close)


async def test_an_admin_save_reaches_subscribers_who_may_see_the_row(server: LiveServer, mode: str) -> None:
    await watch_admin_saves(server, server, mode, server.env)
