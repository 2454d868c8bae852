"""
What the default test site offers (``tests/conformance_app`` and ``tests/testapp``, see
``tests/settings.py``), so the strategies reach real tools, resources, templates and prompts
instead of stopping at "unknown name". ``test_site_names.py`` checks every name here against the
site, so this list cannot silently drift from it.

Left out on purpose: tools that wait by design — ``wait_forever`` (until cancelled),
``slow_steps`` (``steps`` × ``delay`` seconds of progress), ``sleep_sync`` (blocks a thread for up
to ten seconds), ``test_reconnection`` (closes its stream and finishes half a second later), and
``slow_compute``, ``durable_pid`` and ``durable_idempotent_pid`` (sleep for as many seconds as asked).
They test patience, not input handling, and would only turn the fuzzer's time limit into false
hangs.
"""

from functools import cache

from hypothesis import strategies as st


@cache
def text_values() -> st.SearchStrategy[str]:
    """Short text of any code points, plus the strings that tend to break things."""
    return st.one_of(st.text(max_size=30), st.sampled_from(AWKWARD_STRINGS))


AWKWARD_STRINGS = (
    "", " ", "\x00", "\u2028", "\ud800", "\U0001f600", "a" * 600, "../../etc/passwd", "..\\..\\boot.ini",
    "%00", "%2e%2e%2f", "{id}", "$schema", "null", "true", "-1", "1e309", "\r\nX-Injected: 1", "=?base64?YQ==?=",
)

# Tool name -> a strategy per declared argument (near-valid values: the right type most of the
# time, values the schema refuses now and then). `echo` repeats its text `times` times: a count
# between a million and 2**40 would fill the machine's memory (a long run was killed by the OOM
# killer for 2**31), so counts are small, or so large that the list cannot even be asked for.
_INTS = st.one_of(st.integers(-3, 30), st.sampled_from([-(2**63), 2**63, 2**64, 10**30]))
TOOL_ARGUMENTS: dict[str, dict[str, st.SearchStrategy]] = {
    "test_simple_text": {},
    "test_image_content": {},
    "test_audio_content": {},
    "test_embedded_resource": {},
    "test_multiple_content_types": {},
    "test_tool_with_logging": {},
    "test_tool_with_progress": {},
    "test_error_handling": {},
    "test_sampling": {"prompt": text_values()},
    "test_elicitation": {"message": text_values()},
    "test_elicitation_sep1034_defaults": {},
    "test_elicitation_sep1330_enums": {},
    "json_schema_2020_12_tool": {
        "name": text_values(),
        "address": st.fixed_dictionaries({}, optional={"street": text_values(), "city": text_values()}),
        "preferredContact": st.sampled_from(["email", "phone", "mail", ""]),
        "email": st.sampled_from(["a@example.com", "not-an-email", ""]),
        "phone": text_values(),
    },
    "test_x_mcp_header": {"region": text_values()},
    "test_missing_capability": {},
    "test_streaming_elicitation": {},
    "test_logging_tool": {},
    "test_trigger_tool_change": {},
    "test_trigger_prompt_change": {},
    # The tasks-* conformance fixtures (tests/conformance_app/tasks.py): the ones that become tasks
    # only where the client asks, and answer at once otherwise (a refusal, for task-only tools).
    "greet": {"name": text_values()},
    "failing_job": {},
    "protocol_error_job": {},
    "confirm_delete": {"filename": text_values()},
    "multi_input": {},
    "test_tool_with_task": {},
    "test_input_required_result_elicitation": {},
    "test_input_required_result_sampling": {},
    "test_input_required_result_list_roots": {},
    "test_input_required_result_request_state": {},
    "test_input_required_result_multiple_inputs": {},
    "test_input_required_result_multi_round": {},
    "test_input_required_result_tampered_state": {},
    "test_input_required_result_capabilities": {},
    "echo": {"text": text_values(), "times": _INTS},
    "echo_async": {"text": text_values(), "times": _INTS},
    "add_numbers": {"numbers": st.lists(_INTS, max_size=5)},
    "ask_name": {},
    "whoami": {},
}
# Tools whose Mcp-Param-* headers mirror an argument (x-mcp-header in the input schema).
PARAM_HEADERS = {"test_x_mcp_header": {"region": "Region"}}

RESOURCES = ("test://static-text", "test://static-binary", "test://watched-resource", "test://example-resource",
             "memo://greeting")
# Template -> its variables.
TEMPLATES = {"test://template/{id}/data": ("id",), "memo://items/{item_id}": ("item_id",)}

# Prompt name -> its argument names.
PROMPTS = {
    "test_input_required_result_prompt": (),
    "summarize": ("topic", "style"),
    "testing.greet": ("person", "times", "language"),
    "test_prompt_with_arguments": ("arg1", "arg2"),
    "test_prompt_with_embedded_resource": ("resourceUri",),
    "test_prompt_with_image": (),
    "test_simple_prompt": (),
}

# Template variable values a client might try: ordinary ones, and the encodings of paths,
# separators, dots and control characters that must never reach a resource as such.
TEMPLATE_VALUES = ("1", "42", "abc", "a%20b", "%C3%A9", "..%2F..%2Fetc%2Fpasswd", "%2e%2e", "..", ".", "%2F",
                   "a%5Cb", "%00", "%0A", "%FF", "%", "%zz", "a/b", "?x=1", "#frag")
