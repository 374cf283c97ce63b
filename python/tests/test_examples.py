"""The Python examples (python/examples) run and check their own results against NumPy."""

import pathlib
import runpy

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"


def load(name):
    return runpy.run_path(str(EXAMPLES / name))


def test_buffers_walkthrough(ctx, capsys):
    load("buffers_walkthrough.py")["main"](1000)
    out = capsys.readouterr().out
    assert "1000 sums equal NumPy's" in out


def test_resident_driver_matches_numpy_and_converges(ctx):
    main = load("resident_driver.py")["main"]
    coarse = main(32, 0.125)
    fine = main(64, 0.125)
    # Fourth order in space (the time error is smaller at this CFL): at least 8x smaller.
    assert fine < coarse / 8, (coarse, fine)


@pytest.mark.parametrize("name", ["buffers_walkthrough.py", "resident_driver.py"])
def test_examples_have_a_docstring_with_their_command(name):
    text = (EXAMPLES / name).read_text()
    assert f"python3 python/examples/{name}" in text
