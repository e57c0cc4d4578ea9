"""Warnings as values (perfkit/warning.py): a code and its fields, frozen, hashable, kept
losslessly, and never read as text."""

from __future__ import annotations

import json
import math
import pickle

import numpy as np
import pytest

from perfkit.warning import Code, Warn


def test_a_warning_is_its_code_and_fields_in_any_order():
    a = Warn(Code.HISTOGRAM_PARTIAL, held=974, requests=10994)
    b = Warn(Code.HISTOGRAM_PARTIAL, requests=10994, held=974)
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != Warn(Code.HISTOGRAM_PARTIAL, held=975, requests=10994)
    assert a != Warn(Code.HISTOGRAM_ABOVE_REQUESTS, held=974, requests=10994)
    assert (a.code, a["held"], a.get("absent", "-")) == (Code.HISTOGRAM_PARTIAL, 974, "-")
    with pytest.raises(AttributeError):
        a.code = Code.RECORDED  # type: ignore[misc]


def test_fields_are_frozen_and_plain():
    w = Warn(Code.PASTED_CTRL_C, lines=[3, np.int64(4)], share=np.float64(0.5))
    assert w["lines"] == (3, 4) and type(w["lines"][1]) is int
    assert type(w["share"]) is float
    hash(w)
    with pytest.raises(TypeError, match="field"):
        Warn(Code.RECORDED, text={"a": 1})


def test_a_warning_is_not_text_to_search():
    w = Warn(Code.FAILED_EVERY_RESPONSE)
    with pytest.raises(TypeError):
        "every response failed" in w  # noqa: B015
    assert w != "every response failed: not a throughput measurement"
    assert str(w) == f"{w}" == w.text == "every response failed: not a throughput measurement"


def test_an_unknown_code_is_refused():
    with pytest.raises(ValueError):
        Warn("no-such-code")


def test_json_form_and_lossless_round_trip():
    inner = Warn(Code.RUN_ENDED, status="failed", exit_code=None, reason="r")
    w = Warn(Code.PASTED_CTRL_C, lines=(3, 4), within=inner, nan=math.nan, big=1.0)
    data = w.to_dict()
    assert data["code"] == "pasted-ctrl-c" and data["text"] == w.text
    assert data["fields"]["within"]["code"] == "run-ended" and data["fields"]["nan"] is None
    json.dumps(data, allow_nan=False)
    back = Warn.decode(w.encode())
    assert back.code is w.code and math.isnan(back["nan"]) and back["within"] == inner
    assert type(back["big"]) is float and back["lines"] == (3, 4)
    assert Warn.decode(Warn(Code.ERRORS_HIGH, ratio=0.25).to_dict()) == Warn(
        Code.ERRORS_HIGH, ratio=0.25)
    assert pickle.loads(pickle.dumps(inner)) == inner


def test_a_warning_within_another_is_worded_in_it():
    inner = Warn(Code.RUN_ENDED, status="killed", reason="interrupted (Ctrl-C)")
    assert f"[{inner}]" == "[run killed: interrupted (Ctrl-C)]"
    assert repr(inner) == ("Warn('run-ended', reason='interrupted (Ctrl-C)', "
                           "status='killed')")
