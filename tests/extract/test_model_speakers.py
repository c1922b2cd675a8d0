"""Who said it, on the model path: the extraction prompt carries the speaker and source rules, the model names each
memory's speaker (`said_by`), the memory's source records it, and what the transcript shows was not said so is not
stored (extract.model_speakers). A real OpenAI-compatible server on 127.0.0.1 answers as the model; real stores.
The same through each real agent CLI: tests/extract/test_cli_contract.py."""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

from codememory import Store
from codememory.core.model import session_position
from codememory.core.provenance import SPEAKERS, said_by
from codememory.extract import OpenAICompatible, extract_session
from codememory.extract.output import SaidBy
from support.extraction import (
    ACCEPTED,
    ASSISTANT_ALONE,
    FROM_PAGE,
    LESSON,
    NO_USER_WORDS,
    PREFERENCE,
    SESSION,
    UNANSWERED,
    UNSAID,
    club_turns,
    stored_memories,
)
from support.scripted_llm import Reply, Script, ScriptedLLM


def extract(tmp_path: Path, answer: dict[str, Any] | str) -> tuple[Store, Any, ScriptedLLM]:
    text = answer if isinstance(answer, str) else json.dumps(answer)
    (tmp_path / "club").mkdir()
    store, _ = Store.init(tmp_path / "club")
    with ScriptedLLM(Script([Reply(text), Reply(json.dumps({"memories": [PREFERENCE]}))])) as llm:
        report = extract_session(store, SESSION, club_turns(), provider=OpenAICompatible(llm.base_url, "m"))
    return store, report, llm


def test_the_prompt_carries_the_speaker_and_source_rules(tmp_path: Path) -> None:
    store, _report, llm = extract(tmp_path, {"memories": []})
    with store:
        (body,) = llm.requests
        system, user = (m["content"] for m in body["messages"])
        assert '"said_by"' in system
        for speaker in SPEAKERS:
            assert f'"{speaker}"' in system
        assert "never becomes a decision, convention, preference or note" in system
        assert "Never copy an error line" in system
        # the transcript shows who said what: the user, the assistant, and the tool's call apart from both
        assert "User: Write a scraper" in user and "Assistant: Fetched it." in user
        assert "Tool: " in user and "NOTE TO AI AGENTS" not in user  # tool outputs are not in the transcript
        # the answer's schema names the speakers the store records
        said = body["response_format"]["json_schema"]["schema"]["$defs"]["ExtractedMemory"]["properties"]["said_by"]
        assert sorted(said["anyOf"][0]["enum"]) == sorted(SPEAKERS)


def test_what_the_transcript_shows_was_not_said_so_is_not_stored(tmp_path: Path) -> None:
    memories = [PREFERENCE, ACCEPTED, FROM_PAGE, UNANSWERED, NO_USER_WORDS, ASSISTANT_ALONE, LESSON, UNSAID]
    store, report, _llm = extract(tmp_path, {"memories": memories})
    with store:
        stored = {m["text"]: m for m in stored_memories(store) if m["entered_by"] == "codememory-extract:llm"}
        assert set(stored) == {PREFERENCE["text"], ACCEPTED["text"], LESSON["text"], UNSAID["text"]}
        assert report.dropped == 4 and report.status == "ok"
        # the source keeps the session position and adds who said it
        assert said_by(stored[PREFERENCE["text"]]["source"]) == "user"
        assert said_by(stored[ACCEPTED["text"]]["source"]) == "assistant_accepted"
        assert said_by(stored[LESSON["text"]]["source"]) == "observed"
        assert said_by(stored[UNSAID["text"]]["source"]) is None
        assert session_position(stored[ACCEPTED["text"]]["source"]) == ("ses_shop1", 1)


def test_a_speaker_the_store_does_not_know_gets_one_repair(tmp_path: Path) -> None:
    wrong = {"memories": [{**PREFERENCE, "said_by": "the team"}]}
    store, report, llm = extract(tmp_path, wrong)
    with store:
        _first, repair = llm.requests
        asked = repair["messages"][1]["content"]
        assert "memories[0].said_by" in asked and "said_by" in asked.split("Answer again", 1)[1]
        assert [m["text"] for m in stored_memories(store) if m["entered_by"] == "codememory-extract:llm"] == [
            PREFERENCE["text"]
        ]
        assert report.llm_calls == 2


def test_the_answer_schema_and_the_store_name_the_same_speakers() -> None:
    assert set(typing.get_args(SaidBy)) == set(SPEAKERS)


def test_a_tool_or_a_file_named_as_the_speaker_is_observed(tmp_path: Path) -> None:
    page = {**FROM_PAGE, "said_by": "tool"}
    lesson = {**LESSON, "said_by": "File"}
    store, report, _llm = extract(tmp_path, {"memories": [page, lesson]})
    with store:
        (stored,) = [m for m in stored_memories(store) if m["entered_by"] == "codememory-extract:llm"]
        assert stored["text"] == LESSON["text"] and said_by(stored["source"]) == "observed"
        assert report.dropped == 1 and report.llm_calls == 1  # no repair asked


def test_without_a_turn_only_the_category_is_checked(tmp_path: Path) -> None:
    unplaced = {k: v for k, v in PREFERENCE.items() if k != "turn"}  # the window's last turn has no user words
    elsewhere = {**ASSISTANT_ALONE, "turn": 99}
    store, report, _llm = extract(tmp_path, {"memories": [unplaced, elsewhere]})
    with store:
        (stored,) = [m for m in stored_memories(store) if m["entered_by"] == "codememory-extract:llm"]
        assert stored["text"] == PREFERENCE["text"] and said_by(stored["source"]) == "user"
        assert report.dropped == 1
