"""The documentation's sources: the API reference lists every public name,
and every relative link of the README and the pages points at a file that
exists. (The site itself is built, warnings as errors, by ``.ci/run``.)"""

import ast
import re
from pathlib import Path

import fastrbfkm

ROOT = Path(__file__).resolve().parents[1]
API = (ROOT / "docs" / "api.rst").read_text(encoding="utf-8")


def documented() -> set[str]:
    """``module.name`` of every entry of the API page's autosummary tables."""
    found, module = set(), "fastrbfkm"
    for line in API.splitlines():
        if line.startswith(".. currentmodule::"):
            module = line.split("::")[1].strip()
        elif re.fullmatch(r"   [A-Za-z_][\w]*", line):
            found.add(f"{module}.{line.strip()}")
    return found


def public_names(module: str) -> set[str]:
    """A submodule's ``__all__``, or its public top-level functions and classes,
    read from its source (without importing torch or numba.cuda)."""
    path = ROOT / (module.replace(".", "/") + ".py")
    if not path.exists():
        path = ROOT / module.replace(".", "/") / "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            getattr(t, "id", None) == "__all__" for t in node.targets
        ):
            return {f"{module}.{n}" for n in ast.literal_eval(node.value)}
    return {
        f"{module}.{node.name}"
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and not node.name.startswith("_")
    }


def test_the_api_reference_lists_every_public_name():
    names = {f"fastrbfkm.{n}" for n in fastrbfkm.__all__ if n != "__version__"}
    for module in ("torch", "cuda", "datasets", "plotting"):
        names |= public_names(f"fastrbfkm.{module}")
    names |= {"fastrbfkm.paper.run_paper", "fastrbfkm.paper.Settings"}
    missing = names - documented()
    assert not missing, f"not in docs/api.rst: {sorted(missing)}"


def test_the_documented_submodules_are_the_public_ones():
    listed = {m for m in dir(fastrbfkm) if not m.startswith("_")} - set(fastrbfkm.__all__)
    assert listed == {"cuda", "datasets", "functional", "paper", "plotting", "torch"}
    for module in listed:
        assert f"fastrbfkm.{module}" in API, module


def test_relative_links_point_at_files():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    broken = []
    for page in pages:
        if "_build" in page.parts:
            continue
        text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+://|#|mailto:", target):
                continue
            path = (page.parent / target.split("#")[0]).resolve()
            generated = "auto_examples" in path.parts  # written by the build
            if not generated and not path.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert not broken, broken
