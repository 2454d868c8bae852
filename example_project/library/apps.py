from django.apps import AppConfig


class LibraryConfig(AppConfig):
    """The example catalogue app."""

    name = "example_project.library"
    label = "library"
