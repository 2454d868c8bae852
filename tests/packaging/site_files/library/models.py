"""The installed-package test's app (tests/packaging): one model, published as resources by mcp.py."""

from django.db import models


class Book(models.Model):
    title = models.CharField(max_length=200)

    def __str__(self) -> str:
        return self.title
