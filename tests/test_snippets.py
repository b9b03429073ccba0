"""Every Python snippet of README.md and of the documentation's pages
(``docs/**/*.md``) runs as written.

Each ```python block is run in a fresh namespace, in a temporary working
directory (the memmap snippet writes ``X.npy``). Skipped, with the reason
shown: the GPU snippet without a CUDA device, the PyTorch snippet without
torch, the Dask snippet without dask.distributed. The Dask snippet starts a
``LocalCluster`` under an ``if __name__ == "__main__":`` guard, so it runs as
a script in a subprocess, as a user would run it.
"""

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted(p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts)]


def snippets(page: Path) -> list[tuple[str, str]]:
    """``(id, code)`` of every ```python block of a page, the id from the
    page's name and the block's section heading."""
    text = page.read_text(encoding="utf-8")
    found = []
    for match in re.finditer(r"^```python\n(.*?)^```", text, flags=re.S | re.M):
        headings = re.findall(r"^#{1,4} (.+)$", text[: match.start()], flags=re.M)
        name = re.sub(r"\W+", "-", headings[-1] if headings else "top").strip("-").lower()
        found.append((f"{page.stem.lower()}:{name}", match.group(1)))
    return found


SNIPPETS = [snippet for page in PAGES for snippet in snippets(page)]


def test_the_pages_have_their_snippets():
    # A renamed fence would silently drop a snippet from the test below. The
    # README, a front page, has one: the quick start (the user guide has the rest).
    assert [name for name, _ in snippets(README)] == ["readme:quick-start"]
    assert len(SNIPPETS) >= 14


def needs_gpu(code: str) -> bool:
    return 'backend="cuda"' in code or "import cupy" in code


def starts_cluster(code: str) -> bool:
    return "LocalCluster" in code


@pytest.mark.parametrize("code", [c for _, c in SNIPPETS], ids=[n for n, _ in SNIPPETS])
def test_snippet_runs_as_written(code, tmp_path, monkeypatch):
    if needs_gpu(code):
        from fastrbfkm import cuda

        if not cuda.is_available():
            pytest.skip("the GPU snippet needs a CUDA device (fastrbfkm.cuda.is_available())")
        if "import cupy" in code and importlib.util.find_spec("cupy") is None:
            pytest.skip("the GPU snippet needs CuPy")
    if "import torch" in code and importlib.util.find_spec("torch") is None:
        pytest.skip("the PyTorch snippet needs torch")
    if starts_cluster(code) and importlib.util.find_spec("distributed") is None:
        pytest.skip("the Dask snippet needs dask.distributed")
    monkeypatch.chdir(tmp_path)
    if starts_cluster(code):
        # Worker processes re-import the script: run it as a user would.
        script = tmp_path / "snippet.py"
        script.write_text(code, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, str(script)],
            capture_output=True,
            text=True,
            timeout=1800,
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr[-4000:]
        return
    exec(compile(code, "<snippet>", "exec"), {"__name__": "docs_snippet"})
