"""The version of fastrbfkm, in one place: ``fastrbfkm.__version__``,
pyproject.toml (``[tool.setuptools.dynamic]``), the documentation and the
release in which deprecated spellings stop working
(:data:`fastrbfkm._deprecation.REMOVED_IN`) all read it here."""

#: The release this source will be: the development of 0.2, whose renames
#: keep the old spellings working, with a ``FutureWarning``, until 0.3.
VERSION = "0.2.0.dev0"
