"""Telling a note that changed something from one that merely states it (text/changes.py)."""

from __future__ import annotations

import pytest

from codememory.text.changes import states_change, subject_words


@pytest.mark.parametrize(
    "text",
    [
        "Both EKS clusters upgraded to 1.29 (1.27 went into paid extended support).",
        "Max group size raised from 500 to 1000 members.",
        "Edit window extended to 24 hours (was 15 minutes).",
        "Digest emails now go out at 17:00 in each user's own timezone.",
        "Switched from Terraform 1.5.7 to OpenTofu 1.7.2.",
        "Changed SENSE_PERIOD_S from 900 to 1800 (30 min).",
        "New best: 83.0 mIoU single-scale with mitb5.",
        "Team is €35/mo for new signups since 2024-04-01.",
        "4.2.2 is no longer used anywhere.",
        "Snap interval went from 15 min to 30 min.",
    ],
)
def test_a_note_saying_something_changed_is_told(text: str) -> None:
    assert states_change(text)


@pytest.mark.parametrize(
    "text",
    [
        "EKS clusters prod-eks and staging-eks run Kubernetes 1.27.",
        "Max group size is 500 members (Chat.max_group_size/0).",
        "Fixed flaky TestFollowRotation by waiting for the fsnotify Create event instead of sleeping 100ms.",
        "Under load the request was dropped from the queue after 2000 ms.",
        "timm 1.0 renamed several state_dict keys.",
        "Nowhere else do we keep a copy; knowing this matters.",
        "Removed class 'promo_sticker' from the label map.",
    ],
)
def test_a_note_stating_a_fact_is_not_taken_for_a_change(text: str) -> None:
    assert not states_change(text)


def test_the_words_an_update_shares_leave_out_paths_and_file_names() -> None:
    answer = subject_words("Uploads are capped at 20 MB by UPLOAD_MAX_BYTES in app/api/photos.py")
    parser = subject_words(
        "Parsing errors in app/api/photos.py were in the multipart parser; switched to python-multipart."
    )
    assert {"upload_max_bytes", "20", "capped"} <= answer
    assert not ({"app", "api", "photos", "py"} & (answer | parser))
    assert (answer & parser) - {"in"} == set()  # nothing but a stop word in common: no update of each other
    assert {"5", "min", "hammer", "ets"} <= subject_words("Hammer (ETS backend): login 5/min per IP")  # a rate
    assert "js" not in subject_words("Node.js 18.x") and "18" in subject_words("Node.js 18.x")


@pytest.mark.parametrize(
    "text",
    [
        "NO LONGER pinned.",
        "Deploys are manual anymore? no: any more manual deploys are blocked.",
        "Since 2023 the cache is warm.",
        "ſince 2023 the cache is warm.",  # long s: the pattern ignores case, and it matches "s"
        "Moved FROM nginx TO caddy2.",
        "Known issue: the snowflake loader was 3 hours late.",
        "I know the company uses many tools.",
        "Bumped pydantic; since then nothing.",
        "Pool size went from ten to twenty.",
        "",
    ],
)
def test_the_literal_check_before_the_pattern_decides_as_the_pattern_alone(text: str) -> None:
    """A text holding none of the literals every match holds skips the pattern: never with another answer."""
    from codememory.text.changes import _CHANGE_RE

    assert states_change(text) == (_CHANGE_RE.search(text) is not None)
