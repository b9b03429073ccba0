"""Old spellings of the public API, kept working for one release with a
``FutureWarning`` that says what to write instead.

The names of the public API (functional, estimators, ``phase_diagram``,
PyTorch layer, command line) were made one set in 0.2 (``docs/conventions.md``,
"Names and errors"); the old spellings stop working in the release after
the one this source is (:data:`REMOVED_IN`, from :mod:`fastrbfkm._version`):

- :func:`keyword_only` lets a function whose trailing parameters became
  keyword-only still take them by position, with a warning;
- :func:`renamed` lets a function take a parameter under its old name, with
  a warning (both names at once is a ``TypeError``, as Python's own);
- :func:`renamed_value` lets a parameter take one of its old values, with a
  warning that names the new one;
- :func:`renamed_option` is the warning for an old option of the command
  line (``fit --k``, now ``--n-clusters``), which ``fastrbfkm.__main__`` still
  takes, hidden from ``--help``.
"""

from __future__ import annotations

import functools
import inspect
import sys
import warnings
from collections.abc import Callable
from typing import TypeVar

from ._version import VERSION

F = TypeVar("F", bound=Callable)


def removal_release(version: str) -> str:
    """The release after the one ``version`` is or leads to: the next minor
    (``"0.2.0.dev0"`` and ``"0.2.1"`` give ``"0.3"``)."""
    major, minor = version.split(".")[:2]
    return f"{major}.{int(minor) + 1}"


#: The release in which the old spellings stop working: the one after
#: ``fastrbfkm.__version__`` (the renames were made in its development).
REMOVED_IN = removal_release(VERSION)


def caller_level(inside: tuple[str, ...] = ("fastrbfkm",)) -> int:
    """The ``stacklevel`` that attributes a warning raised by the function
    calling this one to the first caller outside the package (however many
    of its wrappers stand between); ``inside``: the prefixes of the modules
    that count as the package's wrappers (scikit-learn's too, for methods
    it wraps)."""
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_globals.get("__name__", "").startswith(inside):
        frame, level = frame.f_back, level + 1
    return level


def warn(message: str) -> None:
    """A ``FutureWarning`` attributed to the first caller outside the package
    (however many of its wrappers stand between)."""
    warnings.warn(message, FutureWarning, stacklevel=caller_level())


#: Keyword-only parameters added after positional keywords were deprecated:
#: never positional, so :func:`keyword_only` does not map arguments to them.
NEVER_POSITIONAL = frozenset({"metric"})


def keyword_only(function: F) -> F:
    """Wrap ``function``, whose keyword-only parameters used to be
    positional: extra positional arguments go to them in order, with a
    ``FutureWarning`` naming them (not to :data:`NEVER_POSITIONAL` ones)."""
    parameters = list(inspect.signature(function).parameters.values())
    positional = [
        p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    keywords = [
        p.name for p in parameters if p.kind == p.KEYWORD_ONLY and p.name not in NEVER_POSITIONAL
    ]

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        if len(args) > len(positional):
            extra = args[len(positional) :]
            if len(extra) > len(keywords):
                raise TypeError(
                    f"{function.__name__}() takes at most {len(positional) + len(keywords)} "
                    f"arguments ({len(args)} given)"
                )
            names = keywords[: len(extra)]
            for name in names:
                if name in kwargs:
                    raise TypeError(
                        f"{function.__name__}() got multiple values for argument {name!r}"
                    )
            warn(
                f"{function.__name__}(): pass {', '.join(names)} by keyword "
                f"({', '.join(f'{n}=...' for n in names)}); by position is deprecated "
                f"and stops working in {REMOVED_IN}."
            )
            kwargs.update(zip(names, extra, strict=True))
            args = args[: len(positional)]
        return function(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def renamed(**old_to_new: str) -> Callable[[F], F]:
    """Wrap a function that takes parameter ``new`` under its old name
    ``old`` too (``renamed(C0="C")``), with a ``FutureWarning``."""

    def decorate(function: F) -> F:
        # a method by its class too (``Settings()``, not ``__init__()``)
        where = function.__qualname__.removesuffix(".__init__")

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            for old, new in old_to_new.items():
                if old not in kwargs:
                    continue
                if new in kwargs:
                    raise TypeError(
                        f"{where}() got both {old!r} and {new!r}; "
                        f"{old!r} is the old name of {new!r}"
                    )
                warn(
                    f"{where}(): the parameter {old!r} is now called {new!r}; "
                    f"{old!r} stops working in {REMOVED_IN}."
                )
                kwargs[new] = kwargs.pop(old)
            return function(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate


def renamed_value(name: str, value, old_to_new: dict[str, str], where: str):
    """``value`` of the parameter ``name`` of ``where`` (a function's name), or,
    when it is one of the old values in ``old_to_new``, the new value that
    replaced it, with a ``FutureWarning`` that says what to write."""
    if not isinstance(value, str) or value not in old_to_new:
        return value
    new = old_to_new[value]
    warn(
        f"{where}(): {name}={value!r} is now {name}={new!r}; {value!r} stops working "
        f"in {REMOVED_IN}."
    )
    return new


def renamed_option(command: str, old: str, new: str) -> None:
    """A ``FutureWarning`` for the command line's old option ``old`` of
    ``command`` (``"fit"``), now called ``new``."""
    warn(
        f"fastrbfkm {command}: the option {old} is now called {new}; {old} stops working "
        f"in {REMOVED_IN}."
    )
