"""
The generated references of the documentation site read the source correctly (issue 30).

The settings reference (docs/reference/settings.rst) renders each key of ``DEFAULTS`` with the
comment conf.py writes above it; the system checks reference finds every ``id=`` of a check
message. Both parsers live in docs/_ext/ and import neither Sphinx nor Django, so these tests run
under plain pytest, without the ``docs`` extra: a setting added without a description fails here
as well as in ``scripts/docs``.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

from django_mcp import conf


EXT = Path(__file__).resolve().parents[2] / "docs" / "_ext"

# Keys that may share the comment of the key above them: none. A new setting needs a comment of
# its own, and may not join this list silently.
SHARED_DESCRIPTIONS: set[str] = set()


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"docs_ext_{name}", EXT / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


settings_source = load("settings_source")
checks_source = load("checks_source")


def test_every_default_has_a_description():
    settings = settings_source.read_settings()
    assert [setting.name for setting in settings] == list(conf.DEFAULTS), (
        "DEFAULTS must be one dict literal in conf.py, every key written out")
    assert settings_source.undocumented(settings) == [], "write a comment above each new setting in django_mcp/conf.py"


def test_new_settings_describe_themselves():
    shared = {setting.name for setting in settings_source.read_settings() if setting.shared_with}
    assert shared <= SHARED_DESCRIPTIONS, (
        f"{sorted(shared - SHARED_DESCRIPTIONS)} borrow the comment of the setting above them; give each a comment "
        "of its own in django_mcp/conf.py")


def test_feature_settings_are_read_from_the_source():
    assert settings_source.read_feature_settings() == conf.FEATURE_SETTINGS
    assert set(conf.FEATURE_SETTINGS) <= set(conf.DEFAULTS)


def test_descriptions_come_from_the_comments_above_and_on_the_line():
    source = '''
DEFAULTS = {
    # The name.
    # Over two lines.
    "NAME": "x",
    "TITLE": None,  # None: none
    "PATH": "p",
    # Sized.
    "SIZE": 4 * 1024,
}
FEATURE_SETTINGS = {"SIZE": "app"}
'''
    settings = {setting.name: setting for setting in settings_source.read_settings(source)}
    assert settings["NAME"].description == "The name. Over two lines."
    assert settings["NAME"].shared_with is None
    assert settings["TITLE"].description == "The name. Over two lines. None: none"
    assert settings["TITLE"].shared_with == "NAME"
    assert settings["PATH"].description == "The name. Over two lines."
    assert settings["PATH"].shared_with == "NAME"
    assert settings["SIZE"].default_source == "4 * 1024"
    assert settings_source.read_feature_settings(source) == {"SIZE": "app"}


def test_a_setting_without_any_comment_is_undocumented():
    source = 'DEFAULTS = {\n    "FIRST": 1,\n    # Second.\n    "SECOND": 2,\n\n    "THIRD": 3,\n}\n'
    settings = settings_source.read_settings(source)
    assert settings_source.undocumented(settings) == ["FIRST", "THIRD"]


def test_every_system_check_id_is_found():
    found = {check.id for check in checks_source.read_checks()}
    package = checks_source.package_path()
    written = {match for path in package.rglob("*.py")
               for match in re.findall(r'\bid="(django_mcp\.[\w.]+)"', path.read_text(encoding="utf-8"))}
    assert written == found
    assert {"django_mcp.E002", "django_mcp.W005", "django_mcp.I001", "django_mcp.oauth.E003"} <= found
    for check in checks_source.read_checks():
        assert check.message, check.id
        assert check.level[0] == check.id.rsplit(".", 1)[1][0], check.id


def test_every_setting_is_in_exactly_one_topic():
    settings = settings_source.read_settings()
    assert settings_source.topic_problems(settings) == []
    titles = [title for title, _text, _members in settings_source.TOPICS]
    assert len(titles) == len(set(titles))


def test_a_setting_in_no_topic_is_reported():
    settings = settings_source.read_settings()
    extra = settings_source.SettingSource("BRAND_NEW_SETTING", "1", "A new one.", None, 999)
    assert settings_source.topic_problems([*settings, extra]) == [
        "BRAND_NEW_SETTING is in no topic of TOPICS (docs/_ext/settings_source.py)"]
