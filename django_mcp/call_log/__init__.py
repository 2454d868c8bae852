"""The call log (docs/tools_admin.md): who called which tool, with which redacted arguments, how it ended."""
