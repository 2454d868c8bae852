"""
``manage.py mcp_doctor URL``: a deployed MCP endpoint checked from outside, step by step, as
Claude, ChatGPT, Cursor and VS Code connect to it (docs/howto/when-a-client-cannot-connect.md).

A client of the deployment, not of the project: it speaks HTTP through the standard library only,
follows no redirect (a redirect is itself a finding) and imports nothing of the server. The
command is its interface; ``checkup.diagnose(visit.Visit(url))`` returns the findings in Python.
"""
