"""``django_mcp.asgi.application``: routing aside (tested with the transports), what building it does."""

import gc

import pytest

import django_mcp.asgi


@pytest.fixture
def unfrozen():
    gc.unfreeze()
    yield
    gc.unfreeze()


async def django_app(scope, receive, send):
    raise AssertionError("not called")


def test_building_the_application_freezes_start_up_objects(unfrozen):
    assert gc.get_freeze_count() == 0
    django_mcp.asgi.application(django_app)
    assert gc.get_freeze_count() > 1000  # modules, settings, the site…


def test_the_freeze_can_be_switched_off(unfrozen, settings):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "FREEZE_STARTUP_OBJECTS": False}
    django_mcp.asgi.application(django_app)
    assert gc.get_freeze_count() == 0


@pytest.fixture
def gc_threshold():
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_building_the_application_raises_the_young_generations_threshold(gc_threshold, unfrozen):
    django_mcp.asgi.application(django_app)
    assert gc.get_threshold() == (10_000, 10, 10)


def test_the_threshold_comes_from_the_setting_and_is_never_lowered(gc_threshold, unfrozen, settings):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "GC_THRESHOLD": 5_000}
    django_mcp.asgi.application(django_app)
    assert gc.get_threshold() == (5_000, 10, 10)
    gc.set_threshold(50_000, 10, 10)
    django_mcp.asgi.application(django_app)
    assert gc.get_threshold() == (50_000, 10, 10)


def test_the_threshold_can_be_left_alone(gc_threshold, unfrozen, settings):
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "GC_THRESHOLD": None}
    django_mcp.asgi.application(django_app)
    assert gc.get_threshold() == (700, 10, 10)


# --- static files, as runserver serves them ---------------------------------------------------------

BASE_CSS = "/static/admin/css/base.css"


@pytest.fixture
def static_settings(settings):
    """The test settings (staticfiles installed, STATIC_URL set), building the application quickly."""
    # Building the application collects and freezes the start-up objects: slow, and beside the point here.
    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "FREEZE_STARTUP_OBJECTS": False}
    return settings


def build(**options):
    from django.core.asgi import get_asgi_application

    return django_mcp.asgi.application(get_asgi_application(), **options)


async def get(app, path, headers=()):
    """GET ``path`` from ``app``: status, headers, body (a body message may omit ``body``, as Django's last does)."""
    from asgiref.testing import ApplicationCommunicator

    scope = {"type": "http", "http_version": "1.1", "method": "GET", "scheme": "http", "path": path,
             "raw_path": path.encode(), "root_path": "", "query_string": b"", "server": ("testserver", 80),
             "client": ("127.0.0.1", 50000), "headers": [(b"host", b"testserver"), *headers]}
    communicator = ApplicationCommunicator(app, scope)
    await communicator.send_input({"type": "http.request", "body": b""})
    start = await communicator.receive_output(10)
    assert start["type"] == "http.response.start", start
    body = b""
    while True:
        message = await communicator.receive_output(10)
        assert message["type"] == "http.response.body", message
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    await communicator.wait(10)
    return start["status"], {name.lower(): value for name, value in start["headers"]}, body


async def test_debug_serves_static_files_from_the_finders(static_settings):
    static_settings.DEBUG = True
    status, headers, body = await get(build(), BASE_CSS)
    assert status == 200
    assert headers[b"content-type"].startswith(b"text/css")
    assert b"#header" in body  # Django's own admin stylesheet


async def test_a_missing_static_file_is_a_404(static_settings):
    static_settings.DEBUG = True
    app = build()
    status, _, body = await get(app, "/static/admin/css/no-such-file.css")
    assert status == 404, body[:500]
    status, _, _ = await get(app, "/static/")  # no directory listings
    assert status == 404


async def test_without_debug_static_urls_are_the_django_apps_404(static_settings):
    static_settings.DEBUG = False
    assert not django_mcp.asgi.static_files_served()
    status, headers, body = await get(build(), BASE_CSS)
    assert status == 404
    assert b"#header" not in body


async def test_serve_static_false_never_serves(static_settings):
    static_settings.DEBUG = True
    status, _, body = await get(build(serve_static=False), BASE_CSS)
    assert status == 404
    assert b"#header" not in body


async def test_serve_static_true_serves_without_debug_like_runserver_insecure(static_settings):
    static_settings.DEBUG = False
    app = build(serve_static=True)
    status, headers, _ = await get(app, BASE_CSS)
    assert status == 200 and headers[b"content-type"].startswith(b"text/css")
    status, _, _ = await get(app, "/static/admin/css/no-such-file.css")
    assert status == 404


def test_only_a_local_static_url_with_staticfiles_installed_is_served(static_settings):
    from django.core.exceptions import ImproperlyConfigured

    static_settings.DEBUG = True
    assert django_mcp.asgi.static_files_served()
    assert django_mcp.asgi.static_files_served(True)
    assert not django_mcp.asgi.static_files_served(False)
    for url in ("https://cdn.example.com/static/", "//cdn.example.com/static/"):
        static_settings.STATIC_URL = url
        assert not django_mcp.asgi.static_files_served()
        with pytest.raises(ImproperlyConfigured, match="STATIC_URL"):
            django_mcp.asgi.static_files_served(True)
    static_settings.STATIC_URL = "static/"
    static_settings.INSTALLED_APPS = [app for app in static_settings.INSTALLED_APPS
                                      if app != "django.contrib.staticfiles"]
    assert not django_mcp.asgi.static_files_served()
    with pytest.raises(ImproperlyConfigured, match="django.contrib.staticfiles"):
        django_mcp.asgi.static_files_served(True)


async def test_the_mcp_routes_come_first(static_settings):
    static_settings.DEBUG = True
    # The endpoint under STATIC_URL: MCP's path is still MCP's, and no static file lookup precedes it.
    static_settings.DJANGO_MCP = {**static_settings.DJANGO_MCP, "MCP_PATH": "static/mcp"}
    app = build()
    status, headers, _ = await get(app, "/static/mcp", [(b"accept", b"text/event-stream")])
    assert status == 405 and b"POST" in headers[b"allow"]  # the MCP endpoint's answer, not a file's 404
    status, _, _ = await get(app, BASE_CSS)  # the rest of STATIC_URL comes from the finders
    assert status == 200


@pytest.mark.parametrize("path", ["/static/%2e%2e/settings.py", "/static/../tests/settings.py",
                                  "/static/admin/../../../../etc/passwd"])
async def test_a_path_out_of_the_static_folders_is_a_400(static_settings, path):
    static_settings.DEBUG = True
    status, _, body = await get(build(), path)
    assert status == 400, body[:500]
    assert b"django-mcp-tests-not-secret" not in body and b"root:x:0:0" not in body  # no file served
