"""A small catalogue: authors, their books, and who has borrowed which."""

from django.conf import settings
from django.db import models
from django.utils import timezone


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

    title = models.CharField(max_length=300, db_index=True)  # the catalogue is listed and paged by title
    author = models.ForeignKey(Author, related_name="books", on_delete=models.CASCADE)
    published = models.PositiveIntegerField()
    summary = models.TextField(blank=True)
    available = models.BooleanField(default=True)

    class Meta:
        ordering = ["title"]

    def __str__(self) -> str:
        return self.title


class Loan(models.Model):
    """A book lent to a reader."""

    book = models.ForeignKey(Book, related_name="loans", on_delete=models.CASCADE)
    borrower = models.ForeignKey(settings.AUTH_USER_MODEL, related_name="loans", on_delete=models.CASCADE)
    lent_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-lent_at"]

    def __str__(self) -> str:
        return f"{self.book} (lent to {self.borrower})"
