# shellcheck shell=bash
# Sourced by the scripts in scripts/ (and indirectly by .ci/run); not meant to be run directly.
#
# - cd to the repository root (works from any cwd);
# - create or reuse a virtualenv: $MCP_VENV (default .venv in the repo root; a relative path is
#   relative to the repo root), made with $MCP_PYTHON (default python3; must be >= 3.11);
# - `pip install -e ".[test]"` only when pyproject.toml (or $MCP_DJANGO_SPEC, or the interpreter)
#   changed since the last install, recorded in a stamp file inside the venv;
# - if $MCP_DJANGO_SPEC is set (e.g. "django>=6,<7"), `pip install "$MCP_DJANGO_SPEC"` after the
#   editable install;
# - export PATH (venv's bin first), VIRTUAL_ENV, MCP_ROOT, MCP_VENV (absolute) and
#   MCP_VENV_PYTHON.

if [ -z "${BASH_VERSION:-}" ]; then
    echo "scripts/_bootstrap.sh must be sourced from bash" >&2
    # shellcheck disable=SC2317
    return 1 2>/dev/null || exit 1
fi

_mcp_die() {
    echo "bootstrap: error: $*" >&2
    exit 1
}

MCP_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
export MCP_ROOT
cd "$MCP_ROOT" || _mcp_die "cannot cd to $MCP_ROOT"

_mcp_venv="${MCP_VENV:-.venv}"
case "$_mcp_venv" in
    /*) ;;
    *) _mcp_venv="$MCP_ROOT/$_mcp_venv" ;;
esac
MCP_VENV="$_mcp_venv"
export MCP_VENV
unset _mcp_venv

# The interpreter used to create the venv. An explicit MCP_PYTHON also pins the venv's version:
# a venv made by another Python is recreated.
_mcp_python_explicit=0
if [ -n "${MCP_PYTHON:-}" ]; then
    _mcp_python_explicit=1
fi
_mcp_python="${MCP_PYTHON:-python3}"

# Prints "X.Y.Z" for an interpreter, or nothing if it cannot run.
_mcp_py_version() {
    "$1" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null || true
}

# True when the interpreter is >= 3.11.
_mcp_py_ok() {
    "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null
}

_mcp_check_python() {
    command -v "$_mcp_python" >/dev/null 2>&1 || [ -x "$_mcp_python" ] ||
        _mcp_die "interpreter '$_mcp_python' not found (set MCP_PYTHON to a Python >= 3.11)"
    _mcp_py_ok "$_mcp_python" ||
        _mcp_die "'$_mcp_python' is Python $(_mcp_py_version "$_mcp_python"); django_mcp needs >= 3.11 (set MCP_PYTHON)"
}
if [ "$_mcp_python_explicit" = 1 ]; then
    _mcp_check_python
fi

# Serialise concurrent bootstraps of the same venv (e.g. scripts/test and scripts/demo started together).
mkdir -p "$MCP_ROOT/.tmp"
if command -v flock >/dev/null 2>&1; then
    exec {_mcp_lock_fd}>"$MCP_ROOT/.tmp/bootstrap-$(basename "$MCP_VENV").lock"
    flock "$_mcp_lock_fd"
fi

_mcp_venv_python="$MCP_VENV/bin/python"
_mcp_recreate=0
if [ -e "$MCP_VENV" ]; then
    if [ ! -x "$_mcp_venv_python" ] || ! _mcp_py_ok "$_mcp_venv_python"; then
        echo "bootstrap: $MCP_VENV is not a usable Python >= 3.11 venv; recreating it" >&2
        _mcp_recreate=1
    elif [ "$_mcp_python_explicit" = 1 ]; then
        _mcp_want="$(_mcp_py_version "$_mcp_python")"
        _mcp_have="$(_mcp_py_version "$_mcp_venv_python")"
        if [ -n "$_mcp_want" ] && [ "$_mcp_want" != "$_mcp_have" ]; then
            echo "bootstrap: $MCP_VENV has Python $_mcp_have but MCP_PYTHON=$_mcp_python is $_mcp_want; recreating it" >&2
            _mcp_recreate=1
        fi
    fi
fi

if [ ! -e "$MCP_VENV" ] || [ "$_mcp_recreate" = 1 ]; then
    _mcp_check_python
    echo "bootstrap: creating $MCP_VENV with $_mcp_python ($(_mcp_py_version "$_mcp_python"))" >&2
    "$_mcp_python" -m venv --clear "$MCP_VENV" || _mcp_die "could not create the venv at $MCP_VENV"
    "$_mcp_venv_python" -m pip install --quiet --disable-pip-version-check --upgrade pip ||
        _mcp_die "could not upgrade pip in $MCP_VENV"
fi

# Install only when the inputs changed: pyproject.toml, the extra Django spec, the interpreter.
_mcp_stamp="$MCP_VENV/.django-mcp-install-stamp"
_mcp_stamp_want="$(
    {
        cat "$MCP_ROOT/pyproject.toml"
        echo "MCP_DJANGO_SPEC=${MCP_DJANGO_SPEC:-}"
        echo "python=$(_mcp_py_version "$_mcp_venv_python")"
    } | sha256sum | cut -d' ' -f1
)"
if [ ! -f "$_mcp_stamp" ] || [ "$(cat "$_mcp_stamp")" != "$_mcp_stamp_want" ]; then
    echo "bootstrap: installing django_mcp (editable, [test] extra) into $MCP_VENV" >&2
    rm -f "$_mcp_stamp"
    "$_mcp_venv_python" -m pip install --quiet --disable-pip-version-check -e ".[test]" ||
        _mcp_die "pip install -e \".[test]\" failed"
    if [ -n "${MCP_DJANGO_SPEC:-}" ]; then
        echo "bootstrap: installing $MCP_DJANGO_SPEC" >&2
        "$_mcp_venv_python" -m pip install --quiet --disable-pip-version-check "$MCP_DJANGO_SPEC" ||
            _mcp_die "pip install \"$MCP_DJANGO_SPEC\" failed"
    fi
    echo "$_mcp_stamp_want" >"$_mcp_stamp"
fi

if [ -n "${_mcp_lock_fd:-}" ]; then
    exec {_mcp_lock_fd}>&-
    unset _mcp_lock_fd
fi

VIRTUAL_ENV="$MCP_VENV"
PATH="$MCP_VENV/bin:$PATH"
MCP_VENV_PYTHON="$_mcp_venv_python"
export VIRTUAL_ENV PATH MCP_VENV_PYTHON
unset PYTHONHOME

echo "bootstrap: $("$MCP_VENV_PYTHON" -c 'import sys, django; print("venv %s, Python %d.%d.%d, Django %s" % ((sys.prefix,) + sys.version_info[:3] + (django.get_version(),)))' 2>/dev/null ||
    echo "venv $MCP_VENV (Django not importable?)")" >&2

unset _mcp_python _mcp_python_explicit _mcp_venv_python _mcp_recreate _mcp_stamp _mcp_stamp_want _mcp_want _mcp_have
unset -f _mcp_py_version _mcp_py_ok _mcp_check_python
