"""The text a request hands over to be written (text/written.py) is taken out of what the request is about; quoted
error messages and code spans stay."""

from __future__ import annotations

import pytest

from codememory.text.written import without_text_to_write


@pytest.mark.parametrize(
    ("request_text", "about"),
    [
        (
            "In README.md, say 'chases overdue invoices' instead of 'chases late payments'.",
            "In README.md, say instead of .",
        ),
        ("Fix the typo 'seperately' in README.md.", "Fix the typo in README.md."),
        (
            "Add a line under Unreleased in CHANGELOG.md: 'GBFS poller also loads station_information hourly.'",
            "Add a line under Unreleased in CHANGELOG.md:",
        ),
        ('Replace "foo bar" with "baz qux" in app.py', "Replace with in app.py"),
        # the whole request given in quotes, as some callers pass the user's text
        ("\"In README.md, write 'Oslo and Bergen' instead of 'Oslo'.\"", "In README.md, write instead of ."),
    ],
)
def test_the_quoted_text_to_write_is_taken_out(request_text: str, about: str) -> None:
    assert without_text_to_write(request_text) == about


@pytest.mark.parametrize(
    "request_text",
    [
        "Since this morning every Stripe webhook fails with 400 'No signatures found matching the expected signature'.",
        "A customer in Wrocław says her invoice PDF shows 'Wroc?aw'. Fix it.",
        "Some Android users get 401 'token not yet valid' right after logging in. Investigate and fix.",
        "In TodayViewModel.kt, rename the parameter `m` of onTaken to `medication`.",
        "Why did we choose httpx over requests?",
        # what is shown instead of what should be, and a question why, quote what went wrong
        "A customer says her invoice PDF shows 'Wroc?aw' instead of 'Wrocław'. Fix it.",
        "Why does the header read 'Wroc?aw' instead of 'Wrocław'?",
    ],
)
def test_quoted_errors_code_spans_and_plain_requests_stay(request_text: str) -> None:
    assert without_text_to_write(request_text) == request_text
