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
            for alias in node.names:  # "from . import x" imports the module (or package) x
                sub = f"{target}.{alias.name}"
                path = PACKAGE.parent / sub.replace(".", "/")
                module = path.exists() or path.with_suffix(".py").exists()
                found.add(sub if module else target)
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


#: Modules that belong to another module's layer of the walk below.
ESTIMATOR_LAYER = {
    "fastrbfkm._base": "fastrbfkm.estimator",
    # the estimators' fit decorator that explains out-of-memory errors
    "fastrbfkm._memory": "fastrbfkm.estimator",
    # the seeding algorithms a rows source runs on its rows (the default
    # fit's k-means++ start: rows.initial_centers)
    "fastrbfkm.seeding": "fastrbfkm._rows",
}


def test_x_goes_down_from_fit_to_the_kernels():
    """Followed from ``RBFKMeans.fit``, the array X passes down estimator ->
    input door -> rows source -> kernels (the door asking its leaf helpers:
    validation, the streaming and device-array tests), and no call climbs
    back into a module already below it on the stack."""
    import sys

    import numpy as np

    from fastrbfkm import RBFKMeans

    X = np.random.default_rng(0).normal(size=(600, 3))
    address = X.__array_interface__["data"][0]
    estimator = RBFKMeans(3, random_state=0, max_iter=20)
    estimator.fit(X)  # compile outside the trace
    receivers, stacks = [], []

    def is_x(value):
        return isinstance(value, np.ndarray) and value.__array_interface__["data"][0] == address

    def profile(frame, event, arg):
        if event != "call" or not frame.f_globals.get("__name__", "").startswith("fastrbfkm"):
            return
        stack, f = [], frame
        while f is not None:
            # the kernels are one layer: their wrappers call back the
            # package's size functions
            module = f.f_globals.get("__name__", "").replace("._kernels.", "._kernels@")
            module = module.split("@")[0]
            # the estimators' shared base is the estimator's own layer
            module = ESTIMATOR_LAYER.get(module, module)
            if module.startswith("fastrbfkm") and (not stack or stack[-1] != module):
                stack.append(module)
            f = f.f_back
        stacks.append(stack[::-1])
        code = frame.f_code
        if any(is_x(frame.f_locals.get(a)) for a in code.co_varnames[: code.co_argcount]):
            name = frame.f_globals["__name__"]
            receivers.append(ESTIMATOR_LAYER.get(name, name))

    sys.setprofile(profile)
    try:
        estimator.fit(X)
    finally:
        sys.setprofile(None)
    # the door's helpers: validation, the metric's projection of the rows
    # (fastrbfkm._model's entry: the identity for "euclidean"), and the tests
    # for streamed files and (once the CUDA package is loaded) device arrays
    door = {
        "fastrbfkm._validation",
        "fastrbfkm._model",
        "fastrbfkm._streaming",
        "fastrbfkm.cuda.arrays",
    }
    path = [m for m in dict.fromkeys(receivers) if m not in door]
    assert path == [
        "fastrbfkm.estimator",
        "fastrbfkm._backend",
        "fastrbfkm._rows",
        "fastrbfkm._kernels",
    ]
    assert set(receivers) - set(path) <= door
    for stack in stacks:
        assert len(stack) == len(set(stack)), f"climbs back: {' -> '.join(stack)}"


def test_dir_of_the_package_lists_only_public_names():
    """``dir(fastrbfkm)`` listed TYPE_CHECKING, annotations, importlib, sys and
    types beside the API."""
    import fastrbfkm

    names = set(dir(fastrbfkm))
    assert not names & {"TYPE_CHECKING", "annotations", "importlib", "sys", "types"}
    assert set(fastrbfkm.__all__) <= names
    assert all(not name.startswith("_") or name == "__version__" for name in names)


def test_public_functions_are_not_hidden_by_submodules():
    """Importing a submodule sets an attribute of the package of the same
    name: no public name may be spelt like a submodule, or importing that
    submodule would replace the function by the module."""
    import importlib
    import types

    import fastrbfkm

    for module in sorted(GRAPH):
        if module.startswith("fastrbfkm.") and module.count(".") == 1:
            try:
                importlib.import_module(module)
            except ImportError:  # an optional dependency (torch) is missing
                continue
    for name in fastrbfkm.__all__:
        assert not isinstance(getattr(fastrbfkm, name), types.ModuleType), name
    assert callable(fastrbfkm.objective)


#: The documented interfaces between the package's modules: the private
#: names a module may import from another (outside ``_kernels`` and ``cuda``,
#: which are layers of their own). Everything else a module imports from
#: another is public there (no leading underscore).
#: None today: the modules share only public names (the private modules
#: ``_rows``, ``_backend``, ``_validation`` ... are interfaces, their
#: underscore-free names the documented part).
INTERFACES: dict[str, set[str]] = {}


def private_imports(path: Path) -> set[tuple[str, str]]:
    """``(module, name)`` of every private name ``path`` imports from another
    module of the package (``from .x import _y``)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            target = f"{base}.{node.module}" if node.module else base
        elif (node.module or "").startswith("fastrbfkm"):
            target = node.module
        else:
            continue
        for alias in node.names:
            sub = PACKAGE.parent / f"{target}.{alias.name}".replace(".", "/")
            is_module = sub.exists() or sub.with_suffix(".py").exists()
            if alias.name.startswith("_") and not is_module:
                found.add((target, alias.name))
    return found


def test_modules_share_private_names_only_through_the_documented_interfaces():
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        module = module_name(path)
        if module.startswith(("fastrbfkm._kernels", "fastrbfkm.cuda")):
            continue
        for target, name in private_imports(path):
            if target.startswith(("fastrbfkm._kernels", "fastrbfkm.cuda")) and module.startswith(
                target
            ):
                continue
            if name not in INTERFACES.get(target, set()):
                offenders.append(f"{module} imports {name} from {target}")
    assert not offenders, offenders
