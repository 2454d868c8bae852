"""Nothing of its own: the fixtures are django_mcp's pytest plugin's and pytest-django's."""
