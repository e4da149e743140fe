"""What the Harbor helper scripts share: running Harbor on CPython 3.11, and error text.

Harbor declares Python >= 3.12; on 3.11 ``typing.override`` and ``typing.TypedDict`` are taken
from typing_extensions before Harbor is imported.
"""
import sys
import typing


def apply_typing_shim() -> None:
    try:
        import typing_extensions
    except ImportError:  # 3.12+ without typing_extensions: nothing to patch
        return
    for name in ("override", "TypedDict"):
        if sys.version_info < (3, 12) or not hasattr(typing, name):
            setattr(typing, name, getattr(typing_extensions, name))


def describe_error(exc: BaseException) -> str:
    msg = str(exc).strip()
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__
