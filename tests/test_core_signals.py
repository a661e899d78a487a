"""The s-expression codec is lossless over its domain (property tests)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from passepartout.errors import ProtocolError
from passepartout.signals import Keyword, Signal, Symbol, dumps, loads

_name = st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True)
_atoms = st.one_of(
    st.none(),
    st.just(True),
    st.integers(min_value=-(2**62), max_value=2**62),
    st.floats(allow_nan=False),
    st.text(),  # any Unicode, quotes, backslashes, newlines
    _name.map(Keyword),
    _name.filter(lambda s: s not in ("nil", "t")).map(Symbol),
)
_values = st.recursive(_atoms, lambda inner: st.lists(inner, min_size=1, max_size=5), max_leaves=30)


@given(_values)
def test_round_trip(value: object) -> None:
    back = loads(dumps(value))
    assert back == value
    assert type(back) is type(value)


@given(st.text())
def test_strings_keep_every_character(text: str) -> None:
    assert loads(dumps(text)) == text


def test_types_stay_apart() -> None:
    value = [Keyword("a"), Symbol("a"), "a", 1, 1.0, None, True]
    back = loads(dumps(value))
    assert [type(v) for v in back] == [Keyword, Symbol, str, int, float, type(None), bool]


def test_special_floats() -> None:
    assert loads(dumps(float("inf"))) == float("inf")
    assert math.isnan(loads(dumps(float("nan"))))


def test_empty_list_is_nil() -> None:
    assert dumps([]) == "nil"
    assert loads("()") is None


@given(
    st.dictionaries(_name, _values, max_size=4),
    st.dictionaries(_name, _values, max_size=4),
    st.integers(min_value=0, max_value=10),
)
def test_signal_round_trip(payload: dict, meta: dict, depth: int) -> None:
    payload = {"sensor": Keyword("user-input"), **payload}
    signal = Signal("event", payload, meta, depth)
    back = Signal.from_sexp(signal.to_sexp())
    assert back.type == "event" and back.depth == depth
    assert back.payload == payload and back.meta == meta


def test_signal_wire_form_is_the_seed_plist() -> None:
    signal = Signal(
        payload={"sensor": "user-input", "text": 'hé "x"\n'},
        meta={"source": "emacs", "session-id": "s1"},
    )
    assert signal.to_sexp() == (
        '(:type :event :depth 0 :meta (:source :emacs :session-id "s1") '
        ':payload (:sensor :user-input :text "hé \\"x\\"\n"))'
    )


@pytest.mark.parametrize(
    "text",
    [
        "(",
        "(:type",
        '"unterminated',
        "(:type :bogus)",
        "(:depth -1)",
        "(:type :event :payload (:sensor))",
    ],
)
def test_malformed_input_is_a_protocol_error(text: str) -> None:
    with pytest.raises(ProtocolError):
        Signal.from_sexp(text)


def _sexpdata_reading(text: str) -> object:
    import sexpdata

    from passepartout.signals import from_sexpdata

    return from_sexpdata(sexpdata.loads(text, nil=None, true=None, false=None))


@given(_values)
def test_the_fast_reader_agrees_with_sexpdata(value: object) -> None:
    from passepartout.wire.sexpread import DECLINED, read_plain

    text = dumps(value)
    fast = read_plain(text, 100)
    if fast is not DECLINED:
        assert fast == _sexpdata_reading(text)
        assert type(fast) is type(_sexpdata_reading(text))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("(a . b)", [Symbol("a"), Symbol("."), Symbol("b")]),
        ("'x", [Symbol("quote"), Symbol("x")]),
        ('"a\\nb"', "a\nb"),
        ("-.5", -0.5),
        ("[1 2 (3)]", [1, 2, [3]]),
        ('(:k "v\\"w\\\\" 1.5 -2 nil t)', [Keyword("k"), 'v"w\\', 1.5, -2, None, True]),
    ],
)
def test_what_the_fast_reader_declines_sexpdata_reads(text: str, expected: object) -> None:
    assert loads(text) == expected


def test_both_readers_refuse_deep_nesting() -> None:
    with pytest.raises(ProtocolError, match="nested deeper"):
        loads("(" * 101 + ")" * 101)
    with pytest.raises(ProtocolError):
        loads("(" * 100_000)
