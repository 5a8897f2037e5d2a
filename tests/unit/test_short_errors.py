"""Errors a user reads in 12 lines or fewer (issue 18, item 3): an error of each kind, raised
by a script run as a user runs it, prints the user's frames and the located message with its
caret, and no frame of the compiler; ``AUTODIFF_TRACEBACK=full`` prints them all. See Note
[Traceback filtering] in `autodiff.tracebacks`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import traceback
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import autodiff as ad
from autodiff.cli import main
from autodiff.tracebacks import NOTE
from ir.errors import InterpreterError

ROOT = Path(__file__).resolve().parents[2]
PROJECT_FRAME = re.compile(r'File "[^"]*[/\\](ir|frontend|passes|autodiff)[/\\][^"]*"|<generated ')
CARET_LINE = re.compile(r"^\s*\^+\s*$", re.MULTILINE)
BUDGET = 12

HEADER = "import numpy as np\nimport autodiff as ad\n\n\n"

# name -> (script after HEADER, text on the offending line, the exception's type as printed)
CASES: dict[str, tuple[str, str, str]] = {
    "script-error": (
        """\
        def loss(x):
            s = sorted(x)
            return np.sum(s)


        print(ad.grad(loss)(np.arange(3.0)))
        """,
        "s = sorted(x)",
        "ContainerUseError",
    ),
    "argument-error": (
        """\
        def loss(w, x):
            return np.sum(w * x)


        print(ad.grad(loss)(np.ones(3)))
        """,
        "print(ad.grad(loss)(np.ones(3)))",  # the call: no line of the function is at fault
        "ArgumentError",
    ),
    "non-scalar-grad": (
        """\
        def loss(w):
            return w * 2.0


        print(ad.grad(loss)(np.ones(3)))
        """,
        "return w * 2.0",
        "DifferentiationError",
    ),
    "shape-error": (
        """\
        def loss(w, x):
            return np.sum(x @ w)


        print(ad.grad(loss)(np.ones((3, 2)), np.ones((4, 4))))
        """,
        "return np.sum(x @ w)",
        "ShapeError",
    ),
    "index-out-of-bounds": (
        """\
        def loss(w, idx):
            return np.sum(w[idx])


        print(ad.grad(loss)(np.ones(3), np.array([5])))
        """,
        "return np.sum(w[idx])",
        "InterpreterError",
    ),
    "anomaly": (
        """\
        def rmse(w, x, y):
            err = x @ w - y
            return np.sqrt(np.mean(err**2))


        with ad.detect_anomaly():
            ad.grad(rmse)(np.zeros(3), np.ones((4, 3)), np.zeros(4))
        """,
        "return np.sqrt(np.mean(err**2))",
        "AnomalyError",
    ),
    "user-raise": (
        """\
        def loss(w):
            if np.sum(w) < 0.0:
                raise ValueError("w must not sum below zero")
            return np.sum(w * w)


        print(ad.grad(loss)(-np.ones(3)))
        """,
        'raise ValueError("w must not sum below zero")',
        "ValueError",
    ),
}

# Runs each case as its own __main__ and prints what Python prints for an uncaught error, the
# driver's own frame left out, once as shipped and once with AUTODIFF_TRACEBACK=full; stderr
# (warnings) goes to the same stream so that each case's output is all together.
DRIVER = """\
import os, pathlib, sys, traceback, warnings
sys.stderr = sys.stdout
warnings.simplefilter("always")
for path in sys.argv[1:]:
    for mode in ("short", "full"):
        if mode == "full":
            os.environ["AUTODIFF_TRACEBACK"] = "full"
        else:
            os.environ.pop("AUTODIFF_TRACEBACK", None)
        print(f"==== {path} {mode}", flush=True)
        source = pathlib.Path(path).read_text()
        try:
            exec(compile(source, path, "exec"), {"__name__": "__main__"})
        except Exception as error:
            shown = traceback.format_exception(type(error), error, error.__traceback__.tb_next)
            print("".join(shown), end="")
        else:
            print("no error")
"""


def user_environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "AUTODIFF_TRACEBACK"}
    env["PYTHONPATH"] = str(ROOT)
    return env


def write_cases(tmp_path: Path) -> dict[str, tuple[Path, int]]:
    """Each case as ``NAME.py`` under ``tmp_path``, with its offending line's number."""
    written = {}
    for name, (body, offending, _) in CASES.items():
        source = HEADER + textwrap.dedent(body)
        path = tmp_path / f"{name}.py"
        path.write_text(source, encoding="utf-8")
        (line,) = [i for i, text in enumerate(source.splitlines(), 1) if offending in text]
        written[name] = (path, line)
    return written


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], str]:
    """(case, "short" or "full") -> everything the case printed: one subprocess for all."""
    tmp_path = tmp_path_factory.mktemp("short_errors")
    cases = write_cases(tmp_path)
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(driver), *(str(path) for path, _ in cases.values())],
        capture_output=True,
        text=True,
        env=user_environment(),
        cwd=tmp_path,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == ""
    found: dict[tuple[str, str], str] = {}
    for chunk in done.stdout.split("==== ")[1:]:
        heading, _, text = chunk.partition("\n")
        path, mode = heading.rsplit(" ", 1)
        found[Path(path).stem, mode] = text
    return found


def offending_line(name: str) -> int:
    body, offending, _ = CASES[name]
    source = HEADER + textwrap.dedent(body)
    return next(i for i, text in enumerate(source.splitlines(), 1) if offending in text)


@pytest.mark.parametrize("name", list(CASES))
def test_each_error_kind_prints_the_users_lines_only(
    name: str, outputs: dict[tuple[str, str], str]
) -> None:
    text = outputs[name, "short"]
    lines = text.splitlines()
    assert len(lines) <= BUDGET, text
    line = offending_line(name)
    located = f"{name}.py:{line}:" in text or f'{name}.py", line {line}' in text
    assert located, text
    assert CARET_LINE.search(text), text
    assert not PROJECT_FRAME.search(text), text
    assert lines[0] == "Traceback (most recent call last):"
    assert f"{CASES[name][2]}: " in text
    assert "direct cause" not in text
    assert "During handling" not in text
    assert "RuntimeWarning" not in text
    assert lines[-1] == NOTE


@pytest.mark.parametrize("name", list(CASES))
def test_autodiff_traceback_full_prints_every_frame(
    name: str, outputs: dict[tuple[str, str], str]
) -> None:
    text = outputs[name, "full"]
    assert PROJECT_FRAME.search(text), text
    assert NOTE not in text
    assert f"{CASES[name][2]}: " in text


def test_a_located_error_names_the_line_and_column(outputs: dict[tuple[str, str], str]) -> None:
    # Every kind but the argument error (which is about the call) is located in the function.
    for name in CASES:
        if name != "argument-error":
            assert re.search(
                rf"{name}\.py:{offending_line(name)}:\d+: error: ", outputs[name, "short"]
            )


def test_run_time_errors_name_the_operation_and_the_line(
    outputs: dict[tuple[str, str], str],
) -> None:
    text = outputs["index-out-of-bounds", "short"]
    assert "aten::index: index 5 is out of bounds for axis 0 with size 3" in text
    assert "while executing %2 : Double(1) = aten::index(%w, %idx)" in text
    assert "        return np.sum(w[idx])\n" in text
    # The IndexError it comes from is printed in full mode only.
    assert "IndexError" not in text
    assert "IndexError" in outputs["index-out-of-bounds", "full"]


def test_anomaly_mode_prints_its_one_message(outputs: dict[tuple[str, str], str]) -> None:
    text = outputs["anomaly", "short"]
    assert text.count("error:") == 1
    assert "the gradient of aten::sqrt produced inf (in df, at aten::div; anomaly mode)" in text


def test_an_uncaught_script_error_prints_at_most_twelve_lines(tmp_path: Path) -> None:
    path, line = write_cases(tmp_path)["script-error"]
    done = subprocess.run(
        [sys.executable, str(path)],
        capture_output=True,
        text=True,
        env=user_environment(),
        cwd=tmp_path,
        check=False,
        timeout=300,
    )
    assert done.returncode == 1
    output = done.stdout + done.stderr
    assert len(output.splitlines()) <= BUDGET, output
    assert f"script-error.py:{line}:" in output
    assert "s = sorted(x)" in output
    assert not PROJECT_FRAME.search(output), output


# ---- in the same process ------------------------------------------------------------------------


def project_frames(error: BaseException) -> list[str]:
    """The frames of ``error``'s traceback in the project's packages or generated code."""
    return [
        f"{frame.filename}:{frame.lineno}"
        for frame in traceback.extract_tb(error.__traceback__)
        if PROJECT_FRAME.search(f'File "{frame.filename}"')
    ]


def layered(params, x):
    for w, b in params:
        x = np.tanh(x @ w + b)
    return np.sum(x)


def indexed(w, idx):
    return np.sum(w[idx])


def test_a_caught_error_keeps_its_type_and_only_the_users_frames() -> None:
    dloss = ad.grad(layered)
    with pytest.raises(ad.ScriptError) as info:
        dloss(np.ones((2, 2)), np.ones(2))  # an array where a list of layers is expected
    assert not project_frames(info.value)
    assert traceback.extract_tb(info.value.__traceback__)[-1].name == (
        "test_a_caught_error_keeps_its_type_and_only_the_users_frames"
    )
    assert info.value.__notes__ == [NOTE]
    # A bad call changes nothing: the same function still takes its list of layers.
    [(dw, db)] = dloss([(np.eye(2), np.zeros(2))], np.ones(2))
    np.testing.assert_allclose(db, 1.0 - np.tanh(1.0) ** 2)
    np.testing.assert_allclose(dw, np.outer(np.ones(2), db))


def test_the_kernel_error_stays_reachable_but_is_not_printed() -> None:
    scripted = ad.script(indexed)
    with pytest.raises(InterpreterError) as info:
        scripted(np.ones(3), np.array([5]))
    error = info.value
    assert error.__cause__ is None
    assert error.__suppress_context__
    assert isinstance(error.__context__, IndexError)
    assert not project_frames(error)
    assert scripted(np.ones(3), np.array([2])) == 1.0  # the next call works


def test_nested_boundaries_shorten_once() -> None:
    def cube(w):
        return np.sum(w[np.array([7])] ** 3)

    with pytest.raises(InterpreterError) as info:
        ad.hessian(cube)(np.ones(3))  # a Jacobian of a Jacobian, each a boundary
    assert info.value.__notes__ == [NOTE]
    assert not project_frames(info.value)


def test_full_tracebacks_on_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTODIFF_TRACEBACK", "full")
    with pytest.raises(InterpreterError) as info:
        ad.script(indexed)(np.ones(3), np.array([5]))
    assert project_frames(info.value)
    assert isinstance(info.value.__cause__, IndexError)
    assert not hasattr(info.value, "__notes__")


def raising_hook(grad: Any) -> Any:
    raise ValueError("the hook is broken")


def tapped(w):
    h = ad.tap(np.tanh(w), "h")
    return np.sum(h * h)


def test_an_error_of_the_users_hook_is_printed_with_its_frames() -> None:
    with pytest.raises(InterpreterError) as info:
        ad.grad(tapped, hooks={"h": raising_hook})(np.ones(3))
    cause = info.value.__cause__
    assert isinstance(cause, ValueError)
    assert "raising_hook" in [frame.name for frame in traceback.extract_tb(cause.__traceback__)]
    printed = "".join(traceback.format_exception(info.value))
    assert "the hook is broken" in printed
    assert "direct cause" in printed


def failing_pack(array: np.ndarray) -> Any:
    raise KeyError("not ours")


def test_other_exceptions_keep_their_traceback() -> None:
    # A saved-value hook is the user's code, called by the runtime: its KeyError is not ours.
    with pytest.raises(KeyError) as info, ad.saved_value_hooks(failing_pack, lambda p: p):
        ad.grad(tapped)(np.ones(3))
    assert project_frames(info.value)
    assert not hasattr(info.value, "__notes__")


def test_the_command_line_prints_the_whole_traceback_on_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "model.py"
    path.write_text("import numpy as np\n\n\ndef f(x):\n    return np.sum(sorted(x))\n")
    arguments = ["dump", f"{path}:f", "--stage", "typed", "--arg", "x=f64[3]"]
    assert main(arguments) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"{path}:5:" in err
    assert main([*arguments, "--traceback"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):")
    assert re.search(r'File "[^"]*[/\\]frontend[/\\]', err), err
    assert NOTE not in err
