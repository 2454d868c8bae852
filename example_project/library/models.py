"""A small catalogue: authors and their books."""

from django.db import models


class Author(models.Model):
    """Somebody who wrote books."""

    name = models.CharField(max_length=200, unique=True)
    born = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Book(models.Model):
    """A book in the catalogue."""

    title = models.CharField(max_length=300)
    author = models.ForeignKey(Author, related_name="books", on_delete=models.CASCADE)
    published = models.PositiveIntegerField()
    summary = models.TextField(blank=True)
    available = models.BooleanField(default=True)

    class Meta:
        ordering = ["title"]

    def __str__(self) -> str:
        return self.title
