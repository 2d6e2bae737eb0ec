"""The cron dialect: every refusal with its message, and one stored spelling per meaning."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_schedule import CronError, canonical_cron

# ---------------------------------------------------------------------------------------------
# Refusals: failure paths first, each with the message the tool answers.

FIVE_FIELDS = (
    "cron.expression must contain exactly five whitespace-separated fields: "
    "minute hour day-of-month month day-of-week."
)


def element(field: str, text: str) -> str:
    return (
        f'cron.expression {field} field element "{text}" must be *, a value, a-b, */n, a-b/n, '
        "or a comma-separated list of those."
    )


REFUSALS = [
    (None, "cron.expression must be a non-empty trimmed string."),
    (5, "cron.expression must be a non-empty trimmed string."),
    ("", "cron.expression must be a non-empty trimmed string."),
    (" 0 9 * * *", "cron.expression must be a non-empty trimmed string."),
    ("0 9 * * *\n", "cron.expression must be a non-empty trimmed string."),
    ("0 9 * *", FIVE_FIELDS),
    ("0 0 9 * * *", FIVE_FIELDS),
    ("@daily", FIVE_FIELDS),
    ("0,,5 9 * * *", "cron.expression minute field must not contain an empty list element."),
    ("0 9, * * *", "cron.expression hour field must not contain an empty list element."),
    ("0 9 * * MON", element("day-of-week", "MON")),
    ("0 9 * JAN *", element("month", "JAN")),
    ("0 9 L * *", element("day-of-month", "L")),
    ("0 9 15W * *", element("day-of-month", "15W")),
    ("0 9 * * 1#2", element("day-of-week", "1#2")),
    ("0 9 ? * 1", element("day-of-month", "?")),
    ("5/15 9 * * *", element("minute", "5/15")),
    ("-5 9 * * *", element("minute", "-5")),
    ("٣ 9 * * *", element("minute", "٣")),
    (f"{'x' * 100} 9 * * *", element("minute", "xxxxxxxxxxxxxxxxxxxxx...")),
    ("*/0 9 * * *", "cron.expression minute field step must be a positive integer."),
    ("0 1-5/0 * * *", "cron.expression hour field step must be a positive integer."),
    ("60 9 * * *", "cron.expression minute field value 60 is outside 0-59."),
    ("0 24 * * *", "cron.expression hour field value 24 is outside 0-23."),
    ("0 9 0 * *", "cron.expression day-of-month field value 0 is outside 1-31."),
    ("0 9 32 * *", "cron.expression day-of-month field value 32 is outside 1-31."),
    ("0 9 * 0 *", "cron.expression month field value 0 is outside 1-12."),
    ("0 9 * 13 *", "cron.expression month field value 13 is outside 1-12."),
    ("0 9 * * 8", "cron.expression day-of-week field value 8 is outside 0-7."),
    ("0 9 * * 1-8", "cron.expression day-of-week field value 8 is outside 0-7."),
    (
        f"{'9' * 5000} 9 * * *",
        "cron.expression minute field value 999999999999999999999... is outside 0-59.",
    ),
    ("0 9 * * 5-1", "cron.expression day-of-week field range 5-1 is inverted."),
    ("30-10 9 * * *", "cron.expression minute field range 30-10 is inverted."),
]


@pytest.mark.parametrize(("expression", "message"), REFUSALS)
def test_every_refusal_says_which_field_and_why(expression: object, message: str) -> None:
    with pytest.raises(CronError) as caught:
        canonical_cron(expression)
    assert str(caught.value) == message
    assert isinstance(caught.value, ValueError)


# ---------------------------------------------------------------------------------------------
# One spelling per meaning.

SPELLINGS = [
    ("* * * * *", "* * * * *"),
    ("0-59 0-23 * 1-12 *", "* * * * *"),
    ("0 9 * * 1-5", "0 9 * * 1-5"),
    ("0 9 * * 1,2,3,4,5", "0 9 * * 1-5"),
    ("0 9 * * 5,4,3,2,1,1", "0 9 * * 1-5"),
    ("00 09 * * 01", "0 9 * * 1"),
    ("*/15 * * * *", "*/15 * * * *"),
    ("0,15,30,45 * * * *", "*/15 * * * *"),
    ("0-45/15 * * * *", "*/15 * * * *"),
    ("0,30 */1 * * *", "*/30 * * * *"),
    ("5,20,35,50 * * * *", "5-50/15 * * * *"),
    ("0,7,15,30,45 * * * *", "0,7,15,30,45 * * * *"),
    ("1-5,7-9,11 * * * *", "1-5,7-9,11 * * * *"),
    ("0 0,12 * * *", "0 */12 * * *"),
    ("0 9 1 * *", "0 9 1 * *"),
    ("0 9 1 */3 *", "0 9 1 */3 *"),
    ("0 9 1 1,4,7,10 *", "0 9 1 */3 *"),
    ("0 9 1 2-12/2 *", "0 9 1 2-12/2 *"),
    # Sunday is 0 and 7; the spelling says 0.
    ("0 9 * * 7", "0 9 * * 0"),
    ("0 9 * * 0,7", "0 9 * * 0"),
    ("0 9 * * 5-7", "0 9 * * 0,5-6"),
    ("0 9 * * 1-7", "0 9 * * 0-6"),
    # A day field keeps whether it began with a star: it decides how the day fields combine.
    ("0 9 */2 * 1", "0 9 */2 * 1"),
    ("0 9 1-31/2 * 1", "0 9 1-31/2 * 1"),
    ("0 9 */1 * *", "0 9 * * *"),
    ("0 9 1-31 * *", "0 9 1-31 * *"),
    ("0 9 *,15 * *", "0 9 * * *"),
    ("0 9 */10,5 * 1", "0 9 */10,5 * 1"),
    ("0 9 */40 * 1", "0 9 */31 * 1"),
    ("0 9 * * */2", "0 9 * * */2"),
    ("0 9 * * 0,2,4,6", "0 9 * * 0-6/2"),
    ("0 9 * * */7", "0 9 * * */7"),
    ("0 9 * * *,7", "0 9 * * *"),
    ("0  9\t*  *  *", "0 9 * * *"),
    ("*/59 * * * *", "*/59 * * * *"),
    ("0,59 * * * *", "*/59 * * * *"),
    ("59 * * * *", "59 * * * *"),
    (f"*/{'9' * 40} 9 * * *", "0 9 * * *"),
]


@pytest.mark.parametrize(("expression", "canonical"), SPELLINGS)
def test_each_meaning_has_one_spelling(expression: str, canonical: str) -> None:
    assert canonical_cron(expression) == canonical
    assert canonical_cron(canonical) == canonical


# ---------------------------------------------------------------------------------------------
# Properties: the spelling is a fixed point and keeps the selected values.

FIELDS = [("minute", 0, 59), ("hour", 0, 23), ("dom", 1, 31), ("month", 1, 12), ("dow", 0, 7)]


@st.composite
def fields(draw: st.DrawFn, low: int, high: int) -> str:
    elements = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["star", "step", "value", "range", "stepped"]))
        a = draw(st.integers(low, high))
        b = draw(st.integers(a, high))
        n = draw(st.integers(1, high + 2))
        elements.append(
            {"star": "*", "step": f"*/{n}", "value": str(a), "range": f"{a}-{b}"}.get(
                kind, f"{a}-{b}/{n}"
            )
        )
    return ",".join(elements)


expressions = st.tuples(*(fields(low, high) for _, low, high in FIELDS)).map(" ".join)


def selected(expression: str) -> tuple[tuple[frozenset[int], ...], bool, bool]:
    """The values each field selects (Sunday as 0) and whether each day field is star-led:
    worked out here without the module's own spelling code."""
    sets = []
    for (name, low, high), text in zip(FIELDS, expression.split(), strict=True):
        values: set[int] = set()
        for element in text.split(","):
            head, _, step = element.partition("/")
            if head == "*":
                first, last = low, high
            else:
                first, _, end = head.partition("-")
                first, last = int(first), int(end or first)
            values |= set(range(first, last + 1, int(step or 1)))
        if name == "dow":
            values = {0 if value == 7 else value for value in values}
        sets.append(frozenset(values))
    texts = expression.split()
    return tuple(sets), texts[2].startswith("*"), texts[4].startswith("*")


@settings(max_examples=300, deadline=None)
@given(expressions)
def test_the_spelling_is_a_fixed_point_and_selects_the_same_values(expression: str) -> None:
    canonical = canonical_cron(expression)
    assert canonical_cron(canonical) == canonical
    assert selected(canonical) == selected(expression)


@settings(max_examples=200, deadline=None)
@given(expressions, expressions)
def test_expressions_that_select_the_same_values_are_spelled_alike(first: str, second: str) -> None:
    assert (canonical_cron(first) == canonical_cron(second)) == (
        selected(first) == selected(second)
    )


def test_same_selection_same_spelling_over_every_listed_hour_set() -> None:
    # Exhaustive over the hour field's subsets of {0, 6, 12, 18} spelled two ways each.
    for size in range(1, 5):
        for values in itertools.combinations((0, 6, 12, 18), size):
            listed = ",".join(str(value) for value in values)
            reversed_list = ",".join(str(value) for value in reversed(values))
            assert canonical_cron(f"0 {listed} * * *") == canonical_cron(f"0 {reversed_list} * * *")
