"""
A REST API for the catalogue, as a Django team already has one: a DRF viewset at ``/api/books/``.
``mcp.py`` publishes two of its actions as MCP tools (``book_list``, ``book_retrieve``), which run
through the viewset's own ``dispatch()``: its filters, pagination and permissions apply unchanged.
"""

from rest_framework import filters, pagination, permissions, serializers, viewsets

from .models import Book


class BookSerializer(serializers.ModelSerializer):
    """A book as the REST API shows it."""

    author = serializers.StringRelatedField()

    class Meta:
        model = Book
        fields = ["id", "title", "author", "published", "summary", "available"]


class BookPages(pagination.PageNumberPagination):
    page_size = 10


class BookViewSet(viewsets.ReadOnlyModelViewSet):
    """The catalogue, read-only, searchable by title or author and ordered by title or year."""

    queryset = Book.objects.select_related("author")
    serializer_class = BookSerializer
    permission_classes = [permissions.AllowAny]
    filter_backends = [filters.SearchFilter, filters.OrderingFilter]
    search_fields = ["title", "author__name"]
    ordering_fields = ["title", "published"]
    pagination_class = BookPages
