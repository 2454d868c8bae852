"""The durable-task live tests' settings (``tests.tasks.settings_durable_live``) with the OpenTelemetry SDK configured, for daphne and the ``db_worker`` alike."""

from tests.tasks.settings_durable_live import *  # noqa: F403
from tests.tracing.otel_setup import configure


configure()
