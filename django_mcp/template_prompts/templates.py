"""
:class:`TemplatePrompt`: a prompt whose messages are a Django template.

Its arguments are a Django form (:mod:`~django_mcp.template_prompts.arguments`): the client's strings are
converted and validated before anything renders, and the converted values go into the template's
context as data, never as template code (Django compiles a template once, from its source; a
variable's value is only ever output). The context also holds ``user`` (the requesting user),
``prompt`` and ``language``; the template renders in the language the request asks for, so
``{% translate %}`` and date formats follow it.
"""

from __future__ import annotations

import inspect
from typing import Any

from django import forms
from django.conf import settings
from django.utils import translation

from ..context import Context
from ..primitives import docstring_of
from ..protocol.context import RequestContext
from ..protocol.errors import InvalidParams
from ..threads import in_thread
from . import arguments as args
from ..prompts.base import Prompt
from .engines import file_prompt_engine, string_prompt_engine
from .header import parse_header
from .rendering import render, split, to_messages


class TemplatePrompt(Prompt):
    """
    A prompt rendered from a Django template (MCP spec 2025-11-25, server/prompts)::

        @register()
        class ReviewBook(TemplatePrompt):
            template_name = "library/prompts/review_book.md"
            form_class = ReviewForm            # or arguments from the template's header block

            def get_context_data(self, ctx, **arguments):
                return {**arguments, "book": Book.objects.get(pk=arguments["book"])}

    Arguments come from ``form_class`` if set, else from the template's header block (see
    :mod:`~django_mcp.template_prompts.header`), else from the signature of ``get_context_data`` when it
    names them. Title and description come from the class, else from the header.
    """

    options = Prompt.options | {"template_name", "template_string", "form_class", "engine_name", "site"}

    #: The template to render, found through the engine's loaders.
    template_name: str | None = None
    #: Template source instead of a file (prompts stored in the database).
    template_string: str | None = None
    #: A ``django.forms.Form`` subclass whose fields are the arguments.
    form_class: type[forms.Form] | None = None
    #: The ``TEMPLATES`` alias of the engine; None is the first DjangoTemplates engine. A
    #: ``template_name`` needs one; a ``template_string`` without one renders with django_mcp's own
    #: engine (:mod:`~django_mcp.template_prompts.engines`).
    engine_name: str | None = None
    #: The site whose resources ``{% embed %}`` reads; None is ``django_mcp.site``.
    site: Any = None
    #: The argument that picks the language, when the prompt declares one.
    language_argument = "language"

    def __init__(self) -> None:
        # Compiled now, so a template that does not compile fails at registration, not at use.
        self._compiled = self.get_template()
        header = parse_header(self.get_template_source()) if self.form_class is None or not (
            self.title and self.description) else {}
        self.title = self.title or header.get("title")
        self.description = self.description or header.get("description")
        if self.form_class is None:
            self.form_class = self.build_form_class(header)
        if self.arguments is None:
            self.arguments = args.argument_definitions(self.form_class)
        super().__init__()

    # Definition ---------------------------------------------------------------------------------

    def default_description(self) -> str | None:
        # Not render()'s docstring, which every template prompt shares: the function's or the class's.
        target = self.function if self.function is not None else type(self)
        return None if target is TemplatePrompt else docstring_of(target.__doc__)

    def origin(self) -> str:
        stored = getattr(self, "stored_pk", None)
        if stored is not None:
            return f"the database prompt #{stored}"
        if type(self).__module__ == "django_mcp.template_prompts.files":
            return f"the template {self.template_name}"
        return super().origin()

    def get_template(self) -> Any:
        """The compiled template (``django.template.base.Template``)."""
        if self.template_string is not None:
            compiled = getattr(self, "_compiled", None)
            if compiled is not None:
                return compiled
            return string_prompt_engine(self.engine_name).from_string(self.template_string)
        if not self.template_name:
            raise ValueError(f"{type(self).__qualname__} needs template_name or template_string.")
        return file_prompt_engine(self.engine_name).get_template(self.template_name)

    def get_template_source(self) -> str:
        if self.template_string is not None:
            return self.template_string
        return getattr(self._compiled, "source", "")

    def build_form_class(self, header: dict[str, Any]) -> type[forms.Form]:
        """The arguments form: the header's argument specs, else ``get_context_data``'s signature."""
        if "arguments" in header:
            return args.form_from_specs(header["arguments"], f"{type(self).__name__}Arguments")
        hook = self.get_context_data
        parameters = [p for p in inspect.signature(hook).parameters.values()
                      if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) and p.name != "ctx"]
        if parameters:
            return args.form_from_signature(hook, "ctx", self.argument_descriptions,
                                            f"{type(self).__name__}Arguments")
        return args.form_from_specs([], f"{type(self).__name__}Arguments")

    # Work ---------------------------------------------------------------------------------------

    def render(self, **arguments: Any) -> str:
        """Unused: :meth:`get` renders the template. Present because every prompt has a work method."""
        raise NotImplementedError

    def get_context_data(self, ctx: Context, **arguments: Any) -> dict[str, Any]:
        """
        The template's variables, from the converted arguments; override to add your own (sync or
        async: sync code runs in a thread and may use the ORM). ``user``, ``prompt`` and
        ``language`` are added after.
        """
        return arguments

    def get_language(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """
        The language to render in: the ``language`` argument when given, else the user's
        ``language`` attribute when the user model has one, else ``LANGUAGE_CODE``.
        """
        wanted = arguments.get(self.language_argument) or getattr(ctx.user, "language", None) or settings.LANGUAGE_CODE
        try:
            return translation.get_supported_language_variant(str(wanted))
        except LookupError:
            codes = ", ".join(code for code, _ in settings.LANGUAGES)
            raise InvalidParams(f"Unknown language {wanted!r} for prompt {self.name}; available: {codes}") from None

    def clean(self, arguments: dict[str, str]) -> dict[str, Any]:
        """Converted and validated arguments; ``InvalidParams`` (-32602) says what is wrong."""
        try:
            return args.clean_arguments(self.form_class, arguments, self.name)
        except ValueError as error:
            raise InvalidParams(str(error), {"name": self.name}) from None

    def render_messages(self, data: dict[str, Any], language: str) -> list[tuple[str, str, Any]]:
        """Render in ``language``; sync, so the template may use the ORM (it runs in a thread)."""
        with translation.override(language):
            text, collector = render(self.get_template(), data)
        return split(text, collector)

    async def get(self, arguments: dict[str, str], ctx: RequestContext) -> dict[str, Any]:
        """
        ``prompts/get``: a missing required argument or one that does not convert is ``-32602``
        (MCP spec 2025-11-25, server/prompts, "Error Handling"); then the template renders.
        """
        missing = [a["name"] for a in self.arguments or [] if a.get("required") and a["name"] not in arguments]
        if missing:
            raise InvalidParams(f"Missing required arguments for prompt {self.name}: {', '.join(missing)}")
        context = Context(ctx)
        values = await in_thread(self.clean)(arguments)
        language = self.get_language(context, values)
        hook = self.get_context_data
        if inspect.iscoroutinefunction(hook):
            data = await hook(context, **values)
        else:
            data = await in_thread(hook)(context, **values)
        data = {**data, "user": context.user, "prompt": self, "language": language}
        entries = await in_thread(self.render_messages)(data, language)
        site = self.site
        if site is None:
            from ..sites import get_default_site

            site = get_default_site()
        result: dict[str, Any] = {"messages": await to_messages(entries, lambda uri: site.read_resource(uri, ctx))}
        if self.description:
            result["description"] = self.description
        return result

    async def get_completions(self, ctx: Context, argument: str, value: str, context: dict[str, str]) -> list[str]:
        """``complete`` when it names the argument, else the field's choices, queryset or ``complete:``."""
        if argument in (self.complete or {}):
            return await args.completer_completions(self.complete[argument], value, context)
        field = self.form_class.base_fields.get(argument)
        if field is None:
            return []
        return await args.field_completions(field, value, context) or []


def template_prompt_from_function(fn: Any, **options: Any) -> TemplatePrompt:
    """
    ``@template_prompt(template_name=…)``: ``fn`` prepares the template's context from the arguments its
    signature declares (annotations convert them) and returns a dict.
    """
    from ..primitives import RegisteredCallable, as_class_attributes

    TemplatePrompt.check_options(options, "@template_prompt()")
    callable_ = RegisteredCallable(fn)

    async def get_context_data(self: TemplatePrompt, ctx: Context, **arguments: Any) -> dict[str, Any]:
        return await callable_(arguments, ctx.request)

    form_class = options.pop("form_class", None) or args.form_from_signature(
        fn, callable_.context_param, options.get("argument_descriptions"), f"{fn.__name__}Arguments")
    attrs = {**as_class_attributes(options), "form_class": form_class, "get_context_data": get_context_data,
             "function": staticmethod(fn), "__module__": getattr(fn, "__module__", __name__),
             "__qualname__": fn.__qualname__}
    return type(fn.__name__, (TemplatePrompt,), attrs)()
