"""
The fixtures of the conformance suite's ``tasks-*`` scenarios (0.2.0-alpha.12, the 2026-07-28
extension ``io.modelcontextprotocol/tasks``, SEP-2663), under the names and with the behaviour
they check: a tool that never becomes a task, one that may, ones that must, ones that fail in
each way, and ones that wait for the client's input inside the task or before it exists.
"""

import asyncio

from django_mcp import Context, ToolError, tool
from django_mcp.protocol.errors import InternalError


def confirm_schema() -> dict:
    return {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}


@tool(name="greet", description="Greets someone by name, at once (never a task).")
def greet(name: str) -> str:
    return f"Hello, {name}!"


@tool(name="slow_compute", task_support="optional",
      description="Waits the given number of seconds, then reports; a task where the client supports tasks.")
async def slow_compute(seconds: float, label: str = "") -> str:
    await asyncio.sleep(seconds)
    return f"{label or 'computation'} done after {seconds:g} s"


@tool(name="failing_job", task_support="required", description="A job that runs as a task and fails after a second.")
async def failing_job() -> str:
    await asyncio.sleep(1)
    raise ToolError("The job failed: the input file is empty")


@tool(name="protocol_error_job", task_support="required",
      description="A job that runs as a task and ends in a protocol error.")
async def protocol_error_job() -> str:
    await asyncio.sleep(0.5)
    raise InternalError("The job could not reach the service it depends on")


@tool(name="confirm_delete", task_support="optional",
      description="Deletes a file after the user confirms (the task waits for the answer).")
async def confirm_delete(filename: str, ctx: Context) -> str:
    answer = await ctx.elicit(f"Delete {filename}?", confirm_schema(), key="confirm_delete")
    if answer.action == "accept" and (answer.content or {}).get("confirm"):
        return f"Deleted {filename}"
    return f"Kept {filename}"


@tool(name="multi_input", task_support="optional",
      description="Asks two questions at once inside a task, then reports both answers.")
async def multi_input(ctx: Context) -> str:
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "confirm": {"type": "boolean"}}}
    answers = await ctx.request_input({
        "first": {"method": "elicitation/create",
                  "params": {"mode": "form", "message": "First question", "requestedSchema": schema}},
        "second": {"method": "elicitation/create",
                   "params": {"mode": "form", "message": "Second question", "requestedSchema": schema}},
    })
    return "; ".join(f"{key}: {(answer.content or {}).get('name', answer.action)}" for key, answer in answers.items())


USER_NAME = {"method": "elicitation/create", "params": {
    "mode": "form", "message": "What is your name?",
    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}}


@tool(name="test_tool_with_task", task_support="required", ask_before_task={"user_name": USER_NAME},
      description="Asks the user's name before its task exists, then greets them from the task.")
async def tool_with_task(ctx: Context) -> str:
    answer = (await ctx.request_input({"user_name": USER_NAME}))["user_name"]
    return f"Hello, {(answer.content or {}).get('name', 'stranger')}, from a task!"
