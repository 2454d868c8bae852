"""The tool admin (docs/tools_admin.md): every tool has a row staff switch on and off, retitle, restrict and rate-limit."""
