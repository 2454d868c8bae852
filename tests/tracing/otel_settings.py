"""``tests.settings`` with the OpenTelemetry SDK configured (``otel_setup``): a settings module, so daphne and ``manage.py mcp_stdio`` alike start with it."""

from tests.settings import *  # noqa: F403
from tests.tracing.otel_setup import configure


configure()
