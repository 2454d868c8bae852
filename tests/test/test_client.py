"""
django_mcp.test.McpClient against the test project's own ASGI application, in process: every
era, what a call brings back, the questions a server asks, who a request runs as, and errors.
"""

import asyncio

import pytest

from django_mcp.notifications import anotify_list_changed, anotify_resource_updated
from django_mcp.test import ErrorResponse, McpClient, UnansweredRequest


pytestmark = pytest.mark.django_db

ERAS = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
NAME_FORM = {"action": "accept", "content": {"name": "Ada"}}


@pytest.mark.parametrize("version", ERAS)
def test_every_era_lists_calls_reads_gets_and_completes(version):
    client = McpClient(version)
    assert {"echo", "add_numbers", "whoami"} <= set(client.list_tools().names)
    echoed = client.call_tool("echo", text="hi", times=2)
    assert (echoed.text, echoed.is_error, echoed.content) == ("hi hi", False, [{"type": "text", "text": "hi hi"}])
    assert client.call_tool("add_numbers", {"numbers": [1, 2]}).structured == {"total": 3, "count": 2}
    assert "memo://greeting" in client.list_resources().uris
    assert "memo://items/{item_id}" in client.list_resource_templates().uris
    assert client.read_resource("memo://greeting").text == "Hello from the test app."
    assert client.read_resource("memo://items/7").mime_type == "application/json"
    assert "summarize" in client.list_prompts().names
    assert client.get_prompt("summarize", topic="bees", style="detailed").text == "Write a detailed summary of bees."
    assert client.complete("summarize", "style", "d").values == ["detailed"]
    assert client.complete("memo://items/{item_id}", "item_id", "2").values == ["2", "20"]
    client.close()


def test_a_legacy_client_opens_one_session_and_ends_it():
    client = McpClient("2025-11-25")
    assert client.session_id is None
    server = client.initialize()
    assert server["protocolVersion"] == "2025-11-25" and client.session_id
    session = client.session_id
    client.call_tool("echo", text="x")
    assert client.session_id == session  # the same session served every request
    client.close()
    assert client.session_id is None
    client.session_id, client.server = session, server  # as if the client had not heard of the end
    with pytest.raises(ErrorResponse) as refused:
        client.call_tool("echo", text="x")
    assert refused.value.status == 404


def test_a_modern_client_discovers_the_server():
    discovered = McpClient().discover()
    assert "2026-07-28" in discovered["supportedVersions"] and "tools" in discovered["capabilities"]


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
def test_progress_comes_back_with_the_result(version):
    result = McpClient(version).call_tool("slow_steps", steps=3, delay=0)
    assert result.text == "done 3 steps"
    assert [(p["progress"], p["total"], p["message"]) for p in result.progress] == [
        (1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25", "2025-06-18"])
def test_elicitation_is_answered_by_the_tests_answer(version):
    assert McpClient(version, elicitation=NAME_FORM).call_tool("ask_name").text == "Hello, Ada!"
    asked = []

    def answer(params):
        asked.append(params["message"])
        return {"action": "decline"}

    client = McpClient(version, elicitation=answer)
    assert client.call_tool("ask_name").text == "no name given"
    assert asked == ["What is your name?"]
    assert client.answers.asked[0][0] == "elicitation/create"


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
def test_answers_given_as_a_list_are_used_in_order_and_running_out_fails_without_a_hang(version):
    client = McpClient(version, elicitation=[NAME_FORM, {"action": "cancel"}], timeout=5)
    assert client.call_tool("ask_name").text == "Hello, Ada!"
    assert client.call_tool("ask_name").text == "no name given"
    with pytest.raises(UnansweredRequest, match="once more than the test has answers for"):
        client.call_tool("ask_name")
    assert client.call_tool("echo", text="still serving").text == "still serving"


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
def test_a_client_without_answers_does_not_declare_elicitation(version):
    with pytest.raises(ErrorResponse) as refused:
        McpClient(version).call_tool("ask_name")
    # 2026-07-28: the capability the call needs (-32021); a legacy session: the tool's own error.
    assert refused.value.code in (-32021, -32600, -32602, -32603), refused.value


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
def test_force_authenticate_runs_the_request_as_the_user_with_the_scopes_given(version, django_user_model):
    ada = django_user_model.objects.create_user("ada")
    client = McpClient(version)
    client.force_authenticate(ada, scopes=["mcp:read", "mcp:write"])
    assert client.call_tool("whoami").text == "ada mcp:read mcp:write"
    client.force_authenticate(ada, scopes="mcp:read")
    assert client.call_tool("whoami").text == "ada mcp:read"
    client.force_authenticate(ada)
    assert client.call_tool("whoami").text == "ada"


def test_force_authenticate_none_and_logout_make_the_client_anonymous(django_user_model):
    client = McpClient()
    client.force_authenticate(django_user_model.objects.create_user("ada"))
    client.force_authenticate(None)
    assert client.call_tool("whoami").text == "anonymous"
    client.force_authenticate(django_user_model.objects.get(username="ada"))
    client.logout()
    assert client.call_tool("whoami").text == "anonymous"


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
def test_credentials_go_through_the_projects_authentication_classes(version, django_user_model):
    # The API-key class of tests/testapp looks the user up with the async ORM: the user made in
    # this test's transaction is found, so the request ran on the test's connection.
    django_user_model.objects.create_user("bea", is_staff=True)
    client = McpClient(version)
    client.credentials(HTTP_X_API_KEY="bea-key")
    assert client.call_tool("whoami").text == "bea mcp:read mcp:write"
    client.credentials({"X-Api-Key": "nobody-key"})
    with pytest.raises(ErrorResponse) as refused:
        client.call_tool("whoami")
    assert refused.value.status == 401 and refused.value.headers["www-authenticate"].startswith("ApiKey")
    client.credentials()
    assert client.call_tool("whoami").text == "anonymous"
    with pytest.raises(TypeError, match="HTTP_"):
        client.credentials(X_API_KEY="bea-key")


def test_a_new_identity_opens_a_new_legacy_session_as_the_old_one_is_its_users_only(django_user_model):
    client = McpClient("2025-11-25")
    client.call_tool("echo", text="as anonymous")
    anonymous_session, server = client.session_id, client.server
    client.force_authenticate(django_user_model.objects.create_user("eve"))
    assert client.call_tool("whoami").text == "eve"
    assert client.session_id not in (None, anonymous_session)
    client.session_id = anonymous_session  # eve with the anonymous session's id: the server refuses
    with pytest.raises(ErrorResponse) as refused:
        client.call_tool("whoami")
    assert refused.value.status in (403, 404) and server


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
def test_refusals_raise_with_the_json_rpc_error(version):
    client = McpClient(version)
    with pytest.raises(ErrorResponse) as unknown:
        client.call_tool("no_such_tool")
    assert unknown.value.code == -32602 and "no_such_tool" in unknown.value.message
    assert unknown.value.method == "tools/call"
    with pytest.raises(ErrorResponse):
        client.read_resource("memo://nothing-here")


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
def test_invalid_arguments_are_a_tool_error_the_model_can_read_not_a_refusal(version):
    # MCP spec 2025-11-25, server/tools#error-handling: input validation errors are tool errors.
    result = McpClient(version).call_tool("echo", times=2)  # text is required
    assert result.is_error and "text" in result.text


def test_an_unknown_revision_is_refused_at_once():
    with pytest.raises(ValueError, match="Unknown MCP protocol version"):
        McpClient("2030-01-01")


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
def test_log_messages_come_back_with_the_result(version):
    result = McpClient(version, log_level="info").call_tool("test_tool_with_logging")
    assert [entry["data"] for entry in result.log] == [
        "Tool execution started", "Tool processing data", "Tool execution completed"]
    assert all(entry["level"] == "info" for entry in result.log)


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
def test_sampling_and_roots_are_answered_too(version):
    def llm(params):
        question = params["messages"][0]["content"]["text"]
        return {"role": "assistant", "model": "test-model", "content": {"type": "text", "text": f"echo: {question}"}}

    client = McpClient(version, sampling=llm, roots=["file:///srv/library", {"uri": "file:///tmp", "name": "tmp"}])
    assert client.call_tool("test_sampling", prompt="hello").text == "LLM response: echo: hello"
    if version == "2026-07-28":
        listed = client.call_tool("test_input_required_result_list_roots").text
        assert "file:///srv/library" in listed and "file:///tmp" in listed


def test_a_tool_that_fails_answers_an_error_result():
    result = McpClient().call_tool("test_error_handling")
    assert result.is_error and result.text == "This tool intentionally returns an error for testing"


def test_an_argument_mirrored_into_a_header_is_sent_there_without_listing_first():
    # The client learns of x-mcp-header from the -32020 answer, lists the tools and sends the
    # call again with Mcp-Param-Region, as the specification tells clients to.
    client = McpClient()
    assert "eu-west" in client.call_tool("test_x_mcp_header", region="eu-west").text
    assert "eu-west" in client.call_tool("test_x_mcp_header", region="eu-west").text  # known now: one request


# --- async ---------------------------------------------------------------------------------------

@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_the_async_twins_do_the_same(version, django_user_model):
    ada = await django_user_model.objects.acreate(username="ada")
    client = McpClient(version, elicitation=NAME_FORM)
    client.force_authenticate(ada, scopes=["mcp:read"])
    assert "whoami" in (await client.alist_tools()).names
    assert (await client.acall_tool("whoami")).text == "ada mcp:read"
    assert (await client.acall_tool("ask_name")).text == "Hello, Ada!"
    assert (await client.aread_resource("memo://greeting")).text == "Hello from the test app."
    assert (await client.aget_prompt("summarize", topic="x")).text == "Write a short summary of x."
    await client.aclose()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_listen_holds_the_stream_of_change_notifications(version):
    client = McpClient(version)
    async with client.listen(tools=True, resources=True, uris=["memo://greeting"]) as stream:
        if version == "2026-07-28":
            assert stream.acknowledged["toolsListChanged"] is True
        await anotify_list_changed("tools")
        changed = await stream.next("notifications/tools/list_changed")
        assert changed["method"] == "notifications/tools/list_changed"
        await anotify_resource_updated("memo://greeting")
        updated = await stream.next("notifications/resources/updated")
        assert updated["params"]["uri"] == "memo://greeting"
    assert [m["method"] for m in stream.received][:1] == ["notifications/tools/list_changed"]


@pytest.mark.django_db(transaction=True)
async def test_waiting_for_a_notification_that_never_comes_fails_in_bounded_time():
    from django_mcp.test import NoAnswer

    client = McpClient(timeout=0.5)
    async with client.listen(prompts=True) as stream:
        started = asyncio.get_running_loop().time()
        with pytest.raises(NoAnswer, match="notifications/prompts/list_changed"):
            await stream.next("notifications/prompts/list_changed")
        assert asyncio.get_running_loop().time() - started < 3


# --- what the server writes, and a Django login ---------------------------------------------------

@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
def test_the_call_log_has_the_call_when_it_returns(version, settings, django_user_model):
    from django_mcp.call_log.models import McpToolCall

    settings.DJANGO_MCP = {**settings.DJANGO_MCP, "CALL_LOG": True}
    client = McpClient(version)
    client.force_authenticate(django_user_model.objects.create_user("ada"))
    client.call_tool("echo", text="logged")
    [row] = McpToolCall.objects.all()  # written in the test's transaction, before call_tool returned
    assert (row.tool, row.username, row.outcome, row.arguments) == ("echo", "ada", "ok", {"text": "logged"})
    assert row.protocol_version == version


def test_a_legacy_session_row_is_written_when_its_first_request_returns():
    from django_mcp.models import McpSession

    client = McpClient("2025-11-25")
    client.call_tool("echo", text="x")
    assert McpSession.objects.filter(pk__isnull=False).count() == 1


@pytest.mark.django_db(transaction=True)
def test_login_goes_through_the_projects_session_middleware(django_user_model):
    # A project that wraps the endpoint in Channels' AuthMiddlewareStack lets its logged-in users
    # through (SessionAuthentication). Channels' middleware opens connections of its own, so this
    # needs committed rows: transaction=True.
    from channels.auth import AuthMiddlewareStack
    from django.core.asgi import get_asgi_application

    import django_mcp.asgi

    django_user_model.objects.create_user("ada", password="correct horse")
    client = McpClient(app=AuthMiddlewareStack(django_mcp.asgi.application(get_asgi_application())))
    assert client.login(username="ada", password="wrong") is False
    assert client.call_tool("whoami").text == "anonymous"
    assert client.login(username="ada", password="correct horse") is True
    assert client.call_tool("whoami").text == "ada"
    client.logout()
    assert client.call_tool("whoami").text == "anonymous"
    client.force_login(django_user_model.objects.get(username="ada"))
    assert client.call_tool("whoami").text == "ada"


def test_on_notification_hears_each_notification_before_the_result_returns():
    heard = []
    client = McpClient(on_notification=lambda message: heard.append(message["params"]["progress"]))
    result = client.call_tool("slow_steps", steps=3, delay=0)
    assert heard == [1, 2, 3] and [p["progress"] for p in result.progress] == heard


def test_a_legacy_stream_the_server_closes_early_is_resumed_from_its_last_event():
    # test_reconnection closes its POST stream after the priming event (SEP-1699); the client GETs
    # the stream again with Last-Event-ID and gets the result there.
    result = McpClient("2025-11-25").call_tool("test_reconnection")
    assert result.text == "Reconnection test completed successfully"


def test_site_serves_another_site_and_app_and_site_exclude_each_other():
    client = McpClient(site="tests.test.shelf.site")
    assert client.list_tools().names == ["count_writers", "broken_promise"]
    with pytest.raises(TypeError, match="an app or a site, not both"):
        McpClient(app=object(), site="tests.test.shelf.site")
