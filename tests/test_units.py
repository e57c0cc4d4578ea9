"""perfkit.units: every suffix wrk and wrk2 print, converted exactly."""

import math

import pytest

from perfkit import units


@pytest.mark.parametrize(
    "text, expected",
    [
        ("574.78us", 0.57478),
        ("1.32ms", 1.32),
        ("10.15s ", 10150.0),
        ("3.00m", 180000.0),
        ("1.50h", 5_400_000.0),
        ("0.00us", 0.0),
        ("439.00us", 0.439),
    ],
)
def test_time_ms(text, expected):
    assert units.time_ms(text) == expected


def test_time_ms_is_the_nearest_float_to_the_printed_decimal():
    # 574.78 * 0.001 in binary floating point is 0.5747800000000001; Decimal gives 0.57478
    assert units.time_ms("574.78us") == 0.57478
    assert repr(units.time_ms("574.78us")) == "0.57478"


@pytest.mark.parametrize(
    "text, expected",
    [("19.63k", 19630.0), ("158.13", 158.13), ("1.15M", 1_150_000.0), ("31.00", 31.0)],
)
def test_count(text, expected):
    assert units.count(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("480.36MB", 480.36 * 1024**2),
        ("94.01KB", 94.01 * 1024),
        ("1.15GB", 1.15 * 1024**3),
        ("512.00B", 512.0),
    ],
)
def test_bytes_are_binary(text, expected):
    assert units.bytes_(text) == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize(
    "text, expected", [("20.00s", 20.0), ("3.00m", 180.0), ("15.03s", 15.03), ("500.00ms", 0.5)]
)
def test_duration_s(text, expected):
    assert units.duration_s(text) == expected


@pytest.mark.parametrize("fn", [units.time_ms, units.count, units.number, units.bytes_])
def test_nan_placeholders_become_nan(fn):
    assert math.isnan(fn("-nan"))
    assert math.isnan(fn("nan"))


def test_percent():
    assert units.percent("68.33%") == 68.33
    assert math.isnan(units.percent("-nan%"))
    with pytest.raises(units.UnitError):
        units.percent("68.33")


@pytest.mark.parametrize("fn, bad", [
    (units.time_ms, "12.3xs"), (units.time_ms, "ms"), (units.count, "1.2q"),
    (units.bytes_, "12 kB"), (units.time_ms, ""),
])
def test_unknown_suffix_raises_and_names_the_allowed_units(fn, bad):
    with pytest.raises(units.UnitError) as info:
        fn(bad)
    assert "with a unit in" in str(info.value)


@pytest.mark.parametrize("text, expected", [
    ("10s", 10.0), ("2m", 120.0), ("1h30m", 5400.0), ("15", 15.0), ("500ms", 0.5),
])
def test_parse_duration_arg(text, expected):
    assert units.parse_duration_arg(text) == expected


def test_parse_duration_arg_rejects_junk():
    with pytest.raises(units.UnitError):
        units.parse_duration_arg("10 seconds")


def _decimal_reference(number_text, factor):
    from decimal import Decimal

    return float(Decimal(number_text) * Decimal(factor))


def test_fast_path_equals_exact_decimal_conversion_on_many_values():
    # every 2-decimal value wrk prints in a wide range: the float fast path must give the
    # float nearest to the exact decimal product, exactly as the Decimal path does
    import random

    rng = random.Random(7)
    for _ in range(5000):
        text = f"{rng.uniform(0, 99999):.2f}"
        assert units.time_ms(text + "us") == _decimal_reference(text, "0.001")
        assert units.time_ms(text + "s") == _decimal_reference(text, "1000")
        assert units.count(text + "k") == _decimal_reference(text, "1000")
        assert units.bytes_(text + "MB") == _decimal_reference(text, 1024**2)
        assert units.duration_s(text + "ms") == _decimal_reference(text, "0.001")
        assert units.time_ms(text + "m") == _decimal_reference(text, "60000")


@pytest.mark.parametrize("text", ["\u0665%", "\u0660.\u0660\u0665", "\uff15%", "\U0001d7d3%",
                                  "5\u066b0%"])
def test_a_threshold_is_written_in_ascii_digits(text):
    """float() reads any Unicode digit ("\\u0665" is 5): --max-regression \\u0665% was 5%."""
    with pytest.raises(units.UnitError):
        units.fraction(text)
    assert units.fraction("5%") == 0.05 and units.fraction(" 0.05 ") == 0.05


@pytest.mark.parametrize("text", ["\u0665", "\u0661\u0666", "1_000", "\uff11", "\u00b2", "٣.٥"])
def test_ascii_number_refuses_what_python_alone_reads(text):
    with pytest.raises(ValueError):
        units.ascii_number(text, int if "." not in text else float)
    assert units.ascii_number("16", int) == 16 and units.ascii_number("-0.5") == -0.5
    assert math.isnan(units.ascii_number("nan"))  # refused by the option's own check, by name
