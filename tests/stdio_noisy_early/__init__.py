"""An app listed before django_mcp that prints when imported (tests.stdio_early_noisy_settings)."""

from tests.stdio_noisy import noise

print(noise.EARLY_APP_PRINT)
