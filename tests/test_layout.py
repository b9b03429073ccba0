"""The package's layout: its modules import each other without cycles, and a
kernel file imports nothing of the package but other kernels."""

import ast
from pathlib import Path

import fastrbfkm

PACKAGE = Path(fastrbfkm.__file__).parent


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_imports(path: Path) -> set[str]:
    """The package modules that ``path`` imports (at any place in the file)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            target = f"{base}.{node.module}" if node.module else base
            for alias in node.names:  # "from . import x" imports the module x
                sub = f"{target}.{alias.name}"
                found.add(sub if (PACKAGE.parent / sub.replace(".", "/")).exists() else target)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("fastrbfkm"):
            found.add(node.module)
    return {m for m in found if m != name}


GRAPH = {module_name(p): package_imports(p) for p in PACKAGE.rglob("*.py")}


def test_no_import_cycles():
    state: dict[str, str] = {}

    def visit(module, trail):
        if state.get(module) == "done":
            return
        assert state.get(module) != "open", f"import cycle: {' -> '.join([*trail, module])}"
        state[module] = "open"
        for target in GRAPH.get(module, ()):
            visit(target, [*trail, module])
        state[module] = "done"

    for module in GRAPH:
        visit(module, [])


def test_kernels_import_only_kernels():
    for module, targets in GRAPH.items():
        if module.startswith("fastrbfkm._kernels"):
            outside = {t for t in targets if not t.startswith("fastrbfkm._kernels")}
            assert not outside, f"{module} imports {outside}"
