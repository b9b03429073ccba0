"""Sphinx configuration of fastrbfkm's documentation site.

Build it with ``pip install -e ".[docs]"`` and
``sphinx-build -W --keep-going -b html docs docs/_build/html`` (what CI runs:
any warning, a broken cross-reference, a public name without a docstring or
an example that raises, fails the build).
"""

from __future__ import annotations

import os
from pathlib import Path

import fastrbfkm

try:
    import torch  # noqa: F401  (the deep-clustering example and the layer's page)
except ImportError as error:
    raise RuntimeError(
        "building the documentation runs every example, and the deep-clustering "
        "example needs torch: pip install torch --index-url "
        "https://download.pytorch.org/whl/cpu (or with CUDA from pypi.org)"
    ) from error

ROOT = Path(__file__).resolve().parents[1]

project = "fastrbfkm"
author = "fastrbfkm developers"
copyright = "2026, fastrbfkm developers"
release = version = fastrbfkm.__version__

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py", "**.zip"]
nitpicky = False

# Markdown pages: headings get anchors down to level 3, for links such as
# ``performance.md#many-clusters``.
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]

# The API reference: one page per public name, from its numpydoc docstring.
autosummary_generate = True
# Members inherited from the package's own bases (BaseRBFKMeans: predict, score,
# ...) are documented on each estimator; those of scikit-learn's and torch's
# bases are theirs.
autodoc_default_options = {
    "members": True,
    "inherited-members": "BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, "
    "ClusterMixin, _MetadataRequester, _SetOutputMixin, Module",
}
autodoc_typehints = "none"  # the numpydoc sections already give the types
# autodoc documents the members; scikit-learn's generated metadata-routing
# methods (set_fit_request, ...) are scikit-learn's API, not ours.
numpydoc_show_class_members = False
# A documented public name without a docstring is an error (GL08).
numpydoc_validation_checks = {"GL08"}
numpydoc_validation_exclude = {r"\._\w+$"}  # private and dunder members of the base classes



def _skip_member(app, what, name, obj, skip, options):
    """Leave out scikit-learn's metadata-routing setters (documented there)."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return skip


def setup(app):
    app.connect("autodoc-skip-member", _skip_member)


sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "download_all_examples": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "plot_gallery": os.environ.get("FASTRBFKM_DOCS_GALLERY", "True"),
}

html_theme = "pydata_sphinx_theme"
html_title = "fastrbfkm"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
html_static_path: list[str] = []
