"""
The URLconf of ``plain_view.py``'s plain-view servers: ``tests.urls`` (the plain view,
``django_mcp.views.McpView``, at ``/mcp``; the admin and OAuth pages before it), then two floor
views, what the same Django project costs a POST that does no MCP at all.

The floors read the body and answer the fixed JSON the bare Channels consumer answers
(``baseline_asgi.RESPONSE``: the bytes of django_mcp's answer to the echo call), through the same
middleware, URL resolution and handler as ``/mcp``. ``/floor`` is a sync view, as ``McpView`` is
under WSGI; ``/floor-async`` an async one, as ``McpView`` is under Django's ASGI handler (a sync view
there would cost a thread hop ``McpView`` does not). CSRF-exempt, as ``McpView`` is.
"""

from django.http import HttpRequest, HttpResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt

from benchmarks.baseline_asgi import RESPONSE
from tests.urls import urlpatterns as project_urlpatterns


@csrf_exempt
def floor(request: HttpRequest) -> HttpResponse:
    request.body  # noqa: B018  (read, as the endpoint reads it)
    return HttpResponse(RESPONSE, content_type="application/json")


@csrf_exempt
async def floor_async(request: HttpRequest) -> HttpResponse:
    request.body  # noqa: B018
    return HttpResponse(RESPONSE, content_type="application/json")


urlpatterns = [
    *project_urlpatterns,
    path("floor", floor),
    path("floor-async", floor_async),
]
