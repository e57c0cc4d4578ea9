"""perfkit.present.scaling: the SLO tables state each warning once, and the scalability
tables print their parameters to three significant digits, as the index does."""

from __future__ import annotations

import re
from pathlib import Path

from perfkit.analysis import load_experiment
from perfkit.present import scaling as present_scaling
from perfkit.present.tables import render
from perfkit.report.sections import scaling
from perfkit.warning import texts

DATA = Path(__file__).resolve().parents[1] / "data"
#: the closed-loop sweep recorded on a busy shared VM: its default profile has a claimed peak
SHARED_VM = (Path(__file__).resolve().parent / "fixtures" / "scaling"
             / "wrk-connections-shared-vm")



def _slo_text(table, profile, connections) -> str:
    (t,) = [t for t in present_scaling.slo(table) if t.title.startswith(
        f"profile={profile}  connections={connections} ")]
    return render(t, "text")


def _significant(text: str) -> int:
    """Significant digits of a printed number (``"0.00062"`` -> 2, ``"14900"`` -> 3)."""
    digits = text.lstrip("+-").replace(".", "").lstrip("0")
    return len(digits.rstrip("0")) if "." not in text else len(digits)


def test_slo_notes_state_each_warning_once(demo_slo):
    for t in present_scaling.slo(demo_slo):
        said = texts(t.notes)  # the words a reader sees: no note holds another
        for i, note in enumerate(said):
            assert not any(note in other for j, other in enumerate(said) if j != i), note
    text = _slo_text(demo_slo, "tuned", 64)
    assert text.count("fell short of the target (0.964 x)") == 1, text


def test_usl_parameters_print_to_three_significant_digits_as_the_index_does():
    closed = load_experiment(SHARED_VM, name="demo-wrk-connections")
    models = scaling.fits(closed.rows(), ["profile"], n_resamples=100, seed=1)
    for table in present_scaling.scaling(models, littles=False):
        for name, estimate, interval in table.rows:
            numbers = re.findall(r"-?\d[\d.e+-]*", f"{estimate} {interval.split('(')[0]}")
            numbers = [n for n in numbers if not re.fullmatch(r"\d", n) or n != "0"]
            assert all(_significant(n) <= 3 for n in numbers), (name, estimate, interval)
    (default,) = [r for r in models.results if r.key == ("default",)]
    lo, hi = default.fit.n_star_ci
    (n_star,) = [row for t in present_scaling.scaling(models, littles=False) for row in t.rows
                 if row[0] == "N*" and row[1] != "-"]
    assert n_star[1] == f"{float(f'{default.fit.n_star:.3g}'):g}"
    assert n_star[2].startswith(f"[{float(f'{lo:.3g}'):g}, {float(f'{hi:.3g}'):g}]")
