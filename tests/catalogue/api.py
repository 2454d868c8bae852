"""
A small REST API over the catalogue, as a project would have one: serializers, a form and DRF
views with their own permission, throttle, filter and pagination classes. The tests of
``django_mcp.tools.django_inputs`` and ``django_mcp.drf.views`` publish them as tools.
"""

from django import forms
from rest_framework import generics, pagination, permissions, serializers, throttling, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import APIException
from rest_framework.filters import OrderingFilter, SearchFilter
from rest_framework.response import Response
from rest_framework.views import APIView

from .models import Entry, Tag, Volume, Writer


# Serializers and forms -------------------------------------------------------------------------------


class WriterSerializer(serializers.ModelSerializer):
    class Meta:
        model = Writer
        fields = ["id", "name", "slug"]


class VolumeSerializer(serializers.ModelSerializer):
    """A volume as the API reads and writes it: the writer and tags by primary key."""

    tags = serializers.PrimaryKeyRelatedField(many=True, queryset=Tag.objects.all(), required=False)

    class Meta:
        model = Volume
        fields = ["id", "title", "writer", "tags", "pages", "price", "published", "format", "in_print", "added"]
        read_only_fields = ["added"]


class VolumeCardSerializer(serializers.ModelSerializer):
    """What a tool answers about a volume: its writer inline."""

    writer = WriterSerializer(read_only=True)
    tags = serializers.SlugRelatedField(many=True, read_only=True, slug_field="name")
    summary = serializers.SerializerMethodField()

    class Meta:
        model = Volume
        fields = ["id", "title", "writer", "tags", "pages", "price", "published", "format", "summary"]

    def get_summary(self, volume: Volume) -> str:
        return f"{volume.title} ({volume.pages} pages)"


class AddressSerializer(serializers.Serializer):
    street = serializers.CharField(max_length=80)
    city = serializers.CharField(max_length=40, help_text="The city or town.")
    postcode = serializers.RegexField(r"^\d{5}\Z", required=False)


class OrderSerializer(serializers.Serializer):
    """A plain serializer with one field of each kind the schema builder knows."""

    customer = serializers.CharField(max_length=50, label="Customer name")
    email = serializers.EmailField()
    website = serializers.URLField(required=False, allow_null=True)
    reference = serializers.UUIDField(required=False)
    copies = serializers.IntegerField(min_value=1, max_value=20, default=1)
    discount = serializers.FloatField(min_value=0, max_value=0.5, required=False)
    budget = serializers.DecimalField(max_digits=8, decimal_places=2, help_text="The most to spend.")
    gift = serializers.BooleanField(default=False)
    deliver_on = serializers.DateField()
    deliver_after = serializers.TimeField(required=False)
    ordered_at = serializers.DateTimeField(required=False)
    format = serializers.ChoiceField(choices=Volume.FORMATS)
    colours = serializers.MultipleChoiceField(choices=["red", "green", "blue"], required=False)
    notes = serializers.ListField(child=serializers.CharField(), max_length=3, required=False)
    address = AddressSerializer()
    others = AddressSerializer(many=True, required=False)
    extra = serializers.DictField(child=serializers.IntegerField(), required=False)
    payload = serializers.JSONField(required=False)


class OwnedTagSerializer(serializers.Serializer):
    """A tag named by the caller, who is recorded as its owner (``CurrentUserDefault``)."""

    name = serializers.CharField(max_length=50)
    owner = serializers.HiddenField(default=serializers.CurrentUserDefault())


class LendForm(forms.Form):
    """Lend a volume to a reader."""

    volume = forms.ModelChoiceField(queryset=Volume.objects.all(), help_text="The volume to lend.")
    reader = forms.CharField(max_length=30, label="Reader's name")
    days = forms.IntegerField(min_value=1, max_value=60, initial=14)
    until = forms.DateField(required=False)
    deposit = forms.DecimalField(max_digits=6, decimal_places=2, required=False)
    tags = forms.ModelMultipleChoiceField(queryset=Tag.objects.all(), required=False)
    wrapping = forms.MultipleChoiceField(choices=[("paper", "Paper"), ("ribbon", "Ribbon")], required=False)
    express = forms.BooleanField(required=False)

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("express") and cleaned.get("days", 0) > 7:
            raise forms.ValidationError("Express loans last at most 7 days.")
        return cleaned


# Views -------------------------------------------------------------------------------------------------


class TwoPerPage(pagination.PageNumberPagination):
    page_size = 2


class IsStaffToWrite(permissions.BasePermission):
    """Anybody signed in may read; only staff may write."""

    message = "Only staff may change the catalogue."

    def has_permission(self, request, view):
        return request.method in permissions.SAFE_METHODS or bool(request.user and request.user.is_staff)


class VolumeViewSet(viewsets.ModelViewSet):
    """The public volumes of the catalogue."""

    queryset = Volume.objects.filter(secret=False).order_by("title")
    serializer_class = VolumeSerializer
    permission_classes = [permissions.IsAuthenticated, IsStaffToWrite]
    pagination_class = TwoPerPage
    filter_backends = [SearchFilter, OrderingFilter]
    search_fields = ["title", "writer__name"]
    ordering_fields = ["title", "pages"]

    @action(detail=True, methods=["post"])
    def reprint(self, request, pk=None):
        """Put a volume back in print."""
        volume = self.get_object()
        volume.in_print = True
        volume.save(update_fields=["in_print"])
        return Response({"id": volume.pk, "in_print": True, "by": request.user.username})


class WriterViewSet(viewsets.ModelViewSet):
    """Writers, addressed by slug."""

    queryset = Writer.objects.all()
    serializer_class = WriterSerializer
    lookup_field = "slug"
    permission_classes = [permissions.AllowAny]
    pagination_class = pagination.LimitOffsetPagination


class EntryCursor(pagination.CursorPagination):
    page_size = 3
    ordering = "number"


class TwoPerMinute(throttling.UserRateThrottle):
    scope = "catalogue_entries"
    rate = "2/min"


class EntrySerializer(serializers.ModelSerializer):
    class Meta:
        model = Entry
        fields = ["id", "number"]


class EntryList(generics.ListAPIView):
    """Numbered entries, a few at a time; callers are throttled."""

    queryset = Entry.objects.all()
    serializer_class = EntrySerializer
    pagination_class = EntryCursor
    throttle_classes = [TwoPerMinute]
    permission_classes = [permissions.AllowAny]


class WhoAmI(APIView):
    """Who the view sees: the user, the credential, and whether the call came through MCP."""

    permission_classes = [permissions.IsAuthenticated]

    def get(self, request):
        return Response({"user": request.user.username, "auth": getattr(request.auth, "key", None),
                         "query": request.query_params.dict(), "via_mcp": hasattr(request, "mcp_context")})

    def post(self, request):
        return Response({"received": request.data}, status=201)


class Unavailable(APIException):
    status_code = 503
    default_detail = "The catalogue is resting: database at db.internal:5432 is down."


class BrokenView(APIView):
    """Views that fail on the server's side."""

    permission_classes = [permissions.AllowAny]

    def get(self, request):
        raise Unavailable()

    def delete(self, request):
        raise RuntimeError("secret connection string")
