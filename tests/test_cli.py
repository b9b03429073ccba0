import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fastrbfkm import RBFKMeans
from fastrbfkm.datasets import make_blobs

#: Far above the slowest honest run (a first run compiles the kernels; CI may be loaded).
TIMEOUT = 3600


def test_make_blobs_is_seeded():
    X1, y1 = make_blobs(500, centers=4, n_features=3, random_state=7)
    X2, y2 = make_blobs(500, centers=4, n_features=3, random_state=7)
    X3, _ = make_blobs(500, centers=4, n_features=3, random_state=8)
    assert X1.shape == (500, 3) and y1.shape == (500,)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    assert not np.array_equal(X1, X3)
    assert np.bincount(y1).tolist() == [125] * 4
    assert make_blobs(10, dtype=np.float32)[0].dtype == np.float32


def run(*args):
    return subprocess.run(
        [sys.executable, "-m", "fastrbfkm", *args], capture_output=True, text=True, timeout=TIMEOUT
    )


def test_demo_runs_and_reports():
    out = run("demo", "--quick", "--random-state", "1")
    assert out.returncode == 0, out.stderr
    for line in ("inertia", "iterations", "temperatures", "first split", "time"):
        assert line in out.stdout


def test_demo_user_errors_are_one_line():
    out = run("demo", "--n-samples", "3", "--n-clusters", "8")
    assert out.returncode != 0
    assert "Traceback" not in out.stderr
    assert "--n" in out.stderr


def test_fit_reads_npy_and_csv_and_writes_outputs(tmp_path):
    X, _ = make_blobs(500, centers=3, random_state=2)
    np.save(tmp_path / "X.npy", X)
    np.savetxt(tmp_path / "X.csv", X, delimiter=",")
    want = RBFKMeans(3, random_state=0).fit(X)
    for data in ("X.npy", "X.csv"):
        centers, labels = tmp_path / f"c-{data}.npy", tmp_path / f"l-{data}.npy"
        out = run(
            "fit",
            str(tmp_path / data),
            "--n-clusters",
            "3",
            "--out",
            str(centers),
            "--labels",
            str(labels),
        )
        assert out.returncode == 0, out.stderr
        assert "inertia" in out.stdout and "temperatures" in out.stdout
        # the files hold the fit the library makes with the CLI's settings
        np.testing.assert_allclose(np.load(centers), want.cluster_centers_, rtol=1e-12)
        np.testing.assert_array_equal(np.load(labels), want.labels_)
        assert f"inertia      {want.inertia_:.8g}" in out.stdout
    out = run("fit", str(tmp_path / "X.npy"), "--n-clusters", "2", "--assignment", "hard")
    assert out.returncode == 0, out.stderr
    hard = RBFKMeans(2, assignment="hard", random_state=0).fit(X)
    assert f"inertia      {hard.inertia_:.8g}" in out.stdout


def test_fit_streams_a_npy_larger_than_the_working_memory(tmp_path):
    X, _ = make_blobs(20_000, centers=3, n_features=4, random_state=2)  # 625 KiB
    np.save(tmp_path / "X.npy", X)
    init = ["--assignment", "hard", "--random-state", "0"]
    outputs = []
    for memory in ("0.1", "1024"):
        labels = tmp_path / f"labels-{memory}.npy"
        out = run(
            "fit",
            str(tmp_path / "X.npy"),
            "--n-clusters",
            "3",
            *init,
            "--labels",
            str(labels),
            "--working-memory",
            memory,
        )
        assert out.returncode == 0, out.stderr
        assert ("streamed from disk" in out.stdout) == (memory == "0.1")
        outputs.append(np.load(labels))
    # k-means|| (streamed) and k-means++ (in memory) find the same three blobs.
    assert len({(a, b) for a, b in zip(*outputs, strict=True)}) == 3
    out = run("fit", str(tmp_path / "X.npy"), "--n-clusters", "3", "--working-memory", "0")
    assert out.returncode == 2 and "--working-memory" in out.stderr


def test_fit_user_errors_are_one_line(tmp_path):
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object))
    np.save(tmp_path / "X.npy", np.ones((5, 2)))
    cases = [
        (str(tmp_path / "missing.npy"), "--n-clusters", "2"),
        (str(tmp_path / "obj.npy"), "--n-clusters", "2"),  # pickles are refused
        (str(tmp_path / "X.npy"), "--n-clusters", "9"),
        (str(tmp_path / "X.npy"), "--n-clusters", "2", "--sigma", "hot"),
    ]
    for args in cases:
        out = run("fit", *args)
        assert out.returncode != 0, args
        assert "Traceback" not in out.stderr, args
        assert "error" in out.stderr.strip().splitlines()[-1], out.stderr


def test_paper_quick_command(tmp_path):
    out = run("paper", "--quick", "--out", str(tmp_path / "x"))
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "x" / "results.md").exists()
    assert "wrote" in out.stdout
    import csv

    with open(tmp_path / "x" / "results.csv") as f:
        rows = list(csv.DictReader(f))
    runs = {(r["dataset"], r["assignment"]) for r in rows}
    assert runs == {
        (data, a)
        for data in ("blobs", "moons", "spiral", "circles")
        for a in ("softmax", "entmax15")
    }
    for r in rows:  # the free energy never exceeds the K-Means distortion at the same centers
        assert float(r["objective"]) <= float(r["inertia"]) * (1 + 1e-9), r
        assert float(r["gap_objective"]) >= 0 and float(r["sigma"]) > 0, r
    for name in ("blobs", "moons", "spiral", "circles"):
        assert (tmp_path / "x" / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_fit_refuses_bad_files_and_outputs_in_one_line_before_fitting(tmp_path):
    np.save(tmp_path / "X.npy", np.random.default_rng(0).normal(size=(40, 2)))
    whole = (tmp_path / "X.npy").read_bytes()
    (tmp_path / "cut.npy").write_bytes(whole[:40])  # a truncated header
    (tmp_path / "empty.csv").write_text("")
    days = np.arange(np.datetime64("2020-01-01"), np.datetime64("2020-01-11")).reshape(5, 2)
    np.save(tmp_path / "days.npy", days)
    np.save(tmp_path / "records.npy", np.zeros(4, dtype=[("a", "f8"), ("b", "f8")]))
    X = str(tmp_path / "X.npy")
    cases = [
        ((str(tmp_path / "cut.npy"), "--n-clusters", "2"), "not a readable .npy file"),
        ((str(tmp_path / "empty.csv"), "--n-clusters", "2"), "holds no numbers"),
        ((str(tmp_path / "days.npy"), "--n-clusters", "2"), "expected real numbers"),
        ((str(tmp_path / "records.npy"), "--n-clusters", "2"), "expected real numbers"),
        ((X, "--n-clusters", "2", "--out", str(tmp_path / "no" / "c.npy")), "does not exist"),
        ((X, "--n-clusters", "2.5"), "--n-clusters must be 'auto' or a positive integer"),
        ((X, "--n-clusters", "2", "--assignment", "kmeans"), "invalid choice"),
        ((X, "--n-clusters", "2", "--working-memory", "x"), "invalid float value"),
    ]
    for args, message in cases:
        out = run("fit", *args)
        assert out.returncode == 2, (args, out.stderr)
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], (args, out.stderr)
        assert "inertia" not in out.stdout, args  # refused before any fit


def fit_here(capsys, *args):
    """``python -m fastrbfkm fit ...`` in this process: (status, stdout, stderr)."""
    from fastrbfkm.__main__ import main

    try:
        status = main(["fit", *map(str, args)])
    except SystemExit as exc:  # argument errors
        status = exc.code
    out = capsys.readouterr()
    return status, out.out, out.err


def test_fit_writes_what_the_extension_says(tmp_path, capsys):
    """``--labels labels.csv`` wrote a NumPy binary under a .csv name."""
    X = np.random.default_rng(0).normal(size=(40, 2))
    np.save(tmp_path / "X.npy", X)
    want = RBFKMeans(2, random_state=0).fit(X)
    c, lab = tmp_path / "c.csv", tmp_path / "l.csv"
    status, out, err = fit_here(
        capsys, tmp_path / "X.npy", "--n-clusters", 2, "--out", c, "--labels", lab
    )
    assert status == 0, err
    assert f"-> {c}" in out and f"-> {lab}" in out
    np.testing.assert_array_equal(np.loadtxt(c, delimiter=",", skiprows=1), want.cluster_centers_)
    np.testing.assert_array_equal(np.loadtxt(lab, dtype=np.int64, skiprows=1), want.labels_)
    status, _, err = fit_here(
        capsys, tmp_path / "X.npy", "--n-clusters", 2, "--labels", tmp_path / "l.npy"
    )
    assert status == 0 and np.load(tmp_path / "l.npy").dtype.kind == "i", err
    for name in ("c.bin", "centers"):
        status, out, err = fit_here(
            capsys, tmp_path / "X.npy", "--n-clusters", 2, "--out", tmp_path / name
        )
        assert status == 2 and "inertia" not in out
        assert (
            err.strip()
            == f"error: --out {tmp_path / name}: expected a file name ending in .npy or .csv"
        )
        assert not (tmp_path / name).exists()


def test_fit_options_reach_the_estimator(tmp_path, capsys):
    X, _ = make_blobs(300, centers=3, random_state=2)
    np.save(tmp_path / "X.npy", X)
    want = RBFKMeans(3, assignment="hard", n_init=3, max_iter=2, tol=0.0, random_state=0).fit(X)
    status, out, err = fit_here(
        capsys, tmp_path / "X.npy", "--n-clusters", 3, "--assignment", "hard",
        "--n-init", 3, "--max-iter", 2, "--tol", 0,
    )  # fmt: skip
    assert status == 0, err
    assert f"inertia      {want.inertia_:.8g}" in out
    assert f"iterations   {want.n_iter_}\n" in out
    for args, message in [
        (("--n-init", 0), "--n-init must be a positive integer"),
        (("--max-iter", 0), "--max-iter must be a positive integer"),
        (("--tol", "nan"), "--tol must be a finite number >= 0"),
        (("--working-memory", "inf"), "--working-memory must be a finite positive number"),
    ]:
        status, out, err = fit_here(capsys, tmp_path / "X.npy", "--n-clusters", 3, *args)
        assert status == 2 and message in err and "Traceback" not in err, (args, err)


def test_fit_reads_delimiters_columns_and_byte_order_marks(tmp_path, capsys):
    """An id column is left out by --columns; a UTF-8 byte-order mark made the
    header line look like data, and a text cell in the first data line made
    it a header (the row silently dropped)."""
    X, _ = make_blobs(60, centers=3, random_state=2)
    want = RBFKMeans(3, random_state=0).fit(X)
    lines = [f"p{i};{a!r};{b!r}" for i, (a, b) in enumerate(X.tolist())]
    (tmp_path / "ids.csv").write_text("id;x;y\n" + "\n".join(lines) + "\n")
    status, out, err = fit_here(
        capsys, tmp_path / "ids.csv", "--n-clusters", 3, "--delimiter", ";", "--columns", "2-3"
    )
    assert status == 0, err
    assert "60 points, 2 features" in out and f"inertia      {want.inertia_:.8g}" in out
    plain = "x,y\n" + "\n".join(f"{a!r},{b!r}" for a, b in X.tolist()) + "\n"
    (tmp_path / "bom.csv").write_bytes(b"\xef\xbb\xbf" + plain.encode())
    status, out, err = fit_here(capsys, tmp_path / "bom.csv", "--n-clusters", 3)
    assert status == 0 and "60 points" in out and f"inertia      {want.inertia_:.8g}" in out, err
    (tmp_path / "mixed.csv").write_text("1.5,oops\n" + plain.split("\n", 1)[1])
    status, out, err = fit_here(capsys, tmp_path / "mixed.csv", "--n-clusters", 3)
    assert status == 2 and "inertia" not in out
    assert "mixed.csv: line 1, column 2: 'oops' is not a number" in err
    np.save(tmp_path / "X.npy", np.column_stack([np.arange(60.0), X]))
    status, out, err = fit_here(capsys, tmp_path / "X.npy", "--n-clusters", 3, "--columns", "2,3")
    assert status == 0 and f"inertia      {want.inertia_:.8g}" in out, err
    for columns, message in [("4", "--columns asks for column 4; the file has 3"),
                             ("0", "--columns must be column numbers from 1"),
                             ("2,2", "--columns names a column twice")]:  # fmt: skip
        status, _, err = fit_here(
            capsys, tmp_path / "X.npy", "--n-clusters", 3, "--columns", columns
        )
        assert status == 2 and message in err, (columns, err)


def test_data_errors_name_the_file(tmp_path, capsys):
    np.save(tmp_path / "two.npy", np.ones((2, 2)))
    status, _, err = fit_here(capsys, tmp_path / "two.npy", "--n-clusters", 5)
    assert status == 2
    assert err.strip() == f"error: {tmp_path / 'two.npy'}: n_samples=2 should be >= n_clusters=5."


def test_help_lists_every_command_in_plain_words():
    out = subprocess.run(
        [sys.executable, "-m", "fastrbfkm", "--help"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert out.returncode == 0
    assert "``" not in out.stdout
    for command in ("demo", "fit", "paper"):
        assert f"{command} (" in " ".join(out.stdout.split()), command


def test_help_and_argument_errors_load_no_numba_nor_scikit_learn():
    """``--help`` took 3.5-7 s importing everything; the package now imports
    its public names at first use, and the CLI imports the fit's modules in
    the commands that fit."""
    script = (
        "import sys\n"
        "from fastrbfkm.__main__ import main\n"
        "for argv in (['--help'], ['fit', '--help'], ['fit', 'X.npy', '--n-clusters', '2.5']):\n"
        "    try:\n"
        "        main(argv)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print(sorted(m for m in ('numba', 'sklearn', 'scipy') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout


def test_a_csv_header_is_detected_or_given(tmp_path):
    (tmp_path / "named.csv").write_text("width,height\n1,2\n3,4\n5,6\n7,8\n")
    (tmp_path / "plain.csv").write_text("1,2\n3,4\n5,6\n7,8\n")
    out = run("fit", str(tmp_path / "named.csv"), "--n-clusters", "2")
    assert out.returncode == 0, out.stderr
    assert "4 points" in out.stdout
    out = run("fit", str(tmp_path / "plain.csv"), "--n-clusters", "2", "--header")
    assert out.returncode == 0, out.stderr
    assert "3 points" in out.stdout  # the first line was taken for names
    out = run("fit", str(tmp_path / "named.csv"), "--n-clusters", "2", "--no-header")
    assert out.returncode == 2
    assert out.stderr.strip().endswith("line 1, column 1: 'width' is not a number")


def test_bad_values_are_named_by_row_and_column_from_one(tmp_path):
    """NaN in a CSV said "Input contains NaN" without file or row; numpy's
    parse errors counted rows from 0 and columns from 1."""
    (tmp_path / "nan.csv").write_text("x,y\n1,2\n3,nan\n5,6\n")
    (tmp_path / "word.csv").write_text("1,2\n3,oops\n")
    (tmp_path / "short.csv").write_text("1,2\n3\n")
    X = np.zeros((6, 3))
    X[4, 1] = np.inf
    np.save(tmp_path / "inf.npy", X)
    cases = [
        ("nan.csv", "nan.csv: row 2 (line 3), column 2 is nan"),
        ("word.csv", "word.csv: line 2, column 2: 'oops' is not a number"),
        ("short.csv", "short.csv: line 2 has 1 columns, line 1 has 2"),
        ("inf.npy", "inf.npy: row 5, column 2 is inf"),
    ]
    for name, message in cases:
        out = run("fit", str(tmp_path / name), "--n-clusters", "2")
        assert out.returncode == 2, (name, out.stderr)
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].endswith(message), (name, out.stderr)


def test_progress_by_default_on_a_terminal_only(tmp_path):
    import pty

    from fastrbfkm.__main__ import default_verbose

    class Terminal:
        def isatty(self):
            return True

    assert default_verbose(None, Terminal()) == 1
    assert default_verbose(None, open(tmp_path / "out.txt", "w")) == 0
    assert default_verbose(0, Terminal()) == 0
    np.save(tmp_path / "X.npy", make_blobs(2000, centers=3, random_state=0)[0])
    args = [sys.executable, "-m", "fastrbfkm", "fit", str(tmp_path / "X.npy"), "--n-clusters", "3"]
    piped = subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT)
    assert piped.returncode == 0 and "annealing" not in piped.stdout + piped.stderr
    main, terminal = pty.openpty()  # stdout and stderr on a terminal, read as they come
    child = subprocess.Popen(args, stdout=terminal, stderr=terminal)
    os.close(terminal)
    shown = b""
    try:
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # every end of the terminal in the child is closed
                break
            if not chunk:
                break
            shown += chunk
        assert child.wait(timeout=TIMEOUT) == 0, shown.decode()
    finally:
        child.kill()
        os.close(main)
    text = shown.decode()
    assert "T000" in text or "annealing" in text, text


def test_fit_k_auto_fits_the_count_of_the_phase_diagram(tmp_path):
    X, _ = make_blobs(900, centers=3, cluster_std=0.5, random_state=2)
    np.save(tmp_path / "X.npy", X)
    want = RBFKMeans("auto", max_clusters=7, random_state=0).fit(X)
    centers = tmp_path / "c.npy"
    out = run(
        "fit",
        str(tmp_path / "X.npy"),
        "--n-clusters",
        "auto",
        "--max-clusters",
        "7",
        "--out",
        str(centers),
    )
    assert out.returncode == 0, out.stderr
    assert f"n_clusters={want.n_clusters_} (auto" in out.stdout
    np.testing.assert_allclose(np.load(centers), want.cluster_centers_, rtol=1e-12)
    for bad in (
        ["--n-clusters", "many"],
        ["--n-clusters", "0"],
        ["--n-clusters", "auto", "--max-clusters", "1"],
    ):
        out = run("fit", str(tmp_path / "X.npy"), *bad)
        assert out.returncode == 2 and "Traceback" not in out.stderr
        assert ("--n-clusters" if bad[1] != "auto" else "max_clusters") in out.stderr


def _read_terminal(main_fd: int) -> bytes:
    """What a child wrote to a pseudo-terminal, until it closed its end."""
    shown = b""
    while True:
        try:
            chunk = os.read(main_fd, 65536)
        except OSError:  # every end of the terminal in the child is closed
            break
        if not chunk:
            break
        shown += chunk
    return shown


def test_progress_goes_to_stderr_when_stderr_is_a_terminal(tmp_path):
    """Progress went to stdout, and only when stdout was a terminal: a fit
    whose results were piped to a file showed no progress on the screen,
    and one piping stderr still mixed progress into the results."""
    import pty

    np.save(tmp_path / "X.npy", make_blobs(2000, centers=3, random_state=0)[0])
    args = [sys.executable, "-m", "fastrbfkm", "fit", str(tmp_path / "X.npy"), "--n-clusters", "3"]
    # results to a pipe, stderr on a terminal: the progress shows there
    main_fd, terminal = pty.openpty()
    child = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=terminal)
    os.close(terminal)
    try:
        shown = _read_terminal(main_fd).decode()
        out = child.stdout.read().decode()
        assert child.wait(timeout=TIMEOUT) == 0, shown
    finally:
        child.kill()
        child.stdout.close()
        os.close(main_fd)
    assert "T000" in shown or "annealing" in shown, shown
    assert "inertia" in out and "T000" not in out and "annealing" not in out, out
    # stdout on a terminal, stderr to a pipe: no progress anywhere
    main_fd, terminal = pty.openpty()
    child = subprocess.Popen(args, stdout=terminal, stderr=subprocess.PIPE)
    os.close(terminal)
    try:
        shown = _read_terminal(main_fd).decode()
        err = child.stderr.read().decode()
        assert child.wait(timeout=TIMEOUT) == 0, err
    finally:
        child.kill()
        child.stderr.close()
        os.close(main_fd)
    assert "inertia" in shown
    assert "T000" not in shown + err and "annealing" not in shown + err, (shown, err)


def test_csv_outputs_have_a_header_row(tmp_path, capsys):
    """Centers and labels in CSV had no header row: the centers' columns are
    named as the input's (its header, else x<column number>), labels 'label'."""
    X, _ = make_blobs(60, centers=3, random_state=2)
    want = RBFKMeans(3, random_state=0).fit(X)
    lines = [f"p{i};{a!r};{b!r}" for i, (a, b) in enumerate(X.tolist())]
    (tmp_path / "ids.csv").write_text("id;width;height\n" + "\n".join(lines) + "\n")
    c, lab = tmp_path / "c.csv", tmp_path / "l.csv"
    status, out, err = fit_here(
        capsys, tmp_path / "ids.csv", "--n-clusters", 3, "--delimiter", ";", "--columns", "2-3",
        "--out", c, "--labels", lab,
    )  # fmt: skip
    assert status == 0, err
    assert c.read_text().splitlines()[0] == "width,height"
    assert lab.read_text().splitlines()[0] == "label"
    np.testing.assert_array_equal(np.loadtxt(c, delimiter=",", skiprows=1), want.cluster_centers_)
    np.testing.assert_array_equal(np.loadtxt(lab, dtype=np.int64, skiprows=1), want.labels_)
    np.save(tmp_path / "X.npy", np.column_stack([np.arange(60.0), X]))
    status, out, err = fit_here(
        capsys, tmp_path / "X.npy", "--n-clusters", 3, "--columns", "2,3", "--out", c
    )
    assert status == 0, err
    assert c.read_text().splitlines()[0] == "x2,x3"
    # a header row is what the CLI itself detects as one
    status, out, err = fit_here(capsys, c, "--n-clusters", 2)
    assert status == 0 and "3 points, 2 features" in out, err


def test_labeled_writes_the_input_rows_with_a_label_column(tmp_path, capsys):
    X, _ = make_blobs(60, centers=3, random_state=2)
    want = RBFKMeans(3, random_state=0).fit(X)
    body = [f"p{i};{a!r};{b!r}" for i, (a, b) in enumerate(X.tolist())]
    (tmp_path / "ids.csv").write_text("id;width;height\n" + "\n".join(body) + "\n")
    labeled = tmp_path / "labeled.csv"
    status, out, err = fit_here(
        capsys, tmp_path / "ids.csv", "--n-clusters", 3, "--delimiter", ";", "--columns", "2-3",
        "--labeled", labeled,
    )  # fmt: skip
    assert status == 0 and f"-> {labeled}" in out, err
    written = labeled.read_text().splitlines()
    assert written[0] == "id;width;height;label"
    labels = want.labels_.tolist()
    assert written[1:] == [f"{line};{label}" for line, label in zip(body, labels, strict=True)]
    # a .npy input: every column under x1,x2,..., labels as integers
    whole = np.column_stack([np.arange(60.0), X])
    np.save(tmp_path / "X.npy", whole)
    status, out, err = fit_here(
        capsys, tmp_path / "X.npy", "--n-clusters", 3, "--columns", "2-3", "--labeled", labeled
    )
    assert status == 0, err
    written = labeled.read_text().splitlines()
    assert written[0] == "x1,x2,x3,label"
    assert [int(line.rsplit(",", 1)[1]) for line in written[1:]] == want.labels_.tolist()
    np.testing.assert_array_equal(np.loadtxt(labeled, delimiter=",", skiprows=1)[:, :3], whole)
    # .npy: the clustered columns and the label
    status, out, err = fit_here(
        capsys,
        tmp_path / "X.npy",
        "--n-clusters",
        3,
        "--columns",
        "2-3",
        "--labeled",
        tmp_path / "l.npy",
    )
    assert status == 0, err
    got = np.load(tmp_path / "l.npy")
    np.testing.assert_array_equal(got, np.column_stack([X, want.labels_]))
    status, out, err = fit_here(
        capsys, tmp_path / "X.npy", "--n-clusters", 3, "--labeled", tmp_path / "l.txt"
    )
    assert status == 2 and "--labeled" in err and "inertia" not in out


def test_the_fastrbfkm_console_command_runs_the_command_line():
    """``pip install`` puts a ``fastrbfkm`` command beside the interpreter
    (there was only ``python -m fastrbfkm``); it names itself so in --help."""
    from importlib import metadata

    (entry,) = [e for e in metadata.entry_points(group="console_scripts") if e.name == "fastrbfkm"]
    assert entry.value == "fastrbfkm.__main__:main"
    script = Path(sys.executable).parent / "fastrbfkm"
    out = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=TIMEOUT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: fastrbfkm ")
    out = subprocess.run(
        [str(script), "fit", "missing.npy", "--n-clusters", "2"], capture_output=True, text=True,
        timeout=TIMEOUT,
    )  # fmt: skip
    assert out.returncode == 2 and out.stderr.strip() == "error: missing.npy: no such file"


def test_the_old_option_names_warn_and_give_the_same_fit(tmp_path, capsys):
    """``--k`` and ``--seed`` (before 0.2) are ``--n-clusters`` and ``--random-state``."""
    X, _ = make_blobs(300, centers=3, random_state=2)
    np.save(tmp_path / "X.npy", X)
    new, old = tmp_path / "new.npy", tmp_path / "old.npy"
    status, _, err = fit_here(
        capsys, tmp_path / "X.npy", "--n-clusters", 3, "--random-state", 1, "--out", new
    )
    assert status == 0, err
    with pytest.warns(FutureWarning) as record:
        status, _, err = fit_here(capsys, tmp_path / "X.npy", "--k", 3, "--seed", 1, "--out", old)
    assert status == 0, err
    messages = [str(w.message) for w in record]
    assert any("--k is now called --n-clusters" in m for m in messages), messages
    assert any("--seed is now called --random-state" in m for m in messages), messages
    np.testing.assert_array_equal(np.load(old), np.load(new))
    status, _, err = fit_here(capsys, tmp_path / "X.npy", "--k", 3, "--n-clusters", 3)
    assert status == 2 and "--k is the old name of --n-clusters" in err
    status, _, err = fit_here(capsys, tmp_path / "X.npy")
    assert status == 2 and "required: --n-clusters" in err


def test_the_demos_old_option_names_warn():
    out = run("demo", "--n", "3", "--k", "8", "--d", "2", "--seed", "1")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    for old, new in [("--n", "--n-samples"), ("--k", "--n-clusters"), ("--d", "--n-features")]:
        assert f"the option {old} is now called {new}" in out.stderr
    assert "FutureWarning" in out.stderr and "--n-samples at least --n-clusters" in out.stderr


def test_backend_and_metric_reach_the_estimator(tmp_path, capsys):
    X = np.abs(make_blobs(300, centers=3, random_state=2)[0]) + 1.0
    np.save(tmp_path / "X.npy", X)
    want = RBFKMeans(3, metric="cosine", backend="cpu", random_state=0).fit(X)
    c = tmp_path / "c.npy"
    status, _, err = fit_here(
        capsys, tmp_path / "X.npy", "--n-clusters", 3, "--metric", "cosine", "--backend", "cpu",
        "--out", c,
    )  # fmt: skip
    assert status == 0, err
    np.testing.assert_array_equal(np.load(c), want.cluster_centers_)
    status, _, err = fit_here(capsys, tmp_path / "X.npy", "--n-clusters", 3, "--backend", "gpu")
    assert status == 2 and "invalid choice" in err
