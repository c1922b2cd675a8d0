"""Extraction of one session's new turns into memories (docs/capture.md).

`extract_session(store, session, turns, provider=...)`:
1. Takes the turns after the last done span of the session (`extractions` rows with status ok, empty or
   over_budget), up to the first turn still being answered. A resumed session extracts only its new turns.
2. Without a provider: the heuristic extractor (codememory.extract.heuristic) over the whole span.
   With one: the span is rendered as a compact transcript, split into windows of at most
   `[llm] max_transcript_tokens` (each tool call described in a sentence: by `[llm] compress_model`, or the
   extraction model with `compress_tools`, else deterministically: extract.compress), and each window is sent
   to the model with the stored memories most relevant to it (extract.known), which the answer may name as
   `already_known` (restated: counted as duplicates) or in a new memory's `supersedes` (changed). Remember
   notes, the agent's pending todos and the files touched are added by rule as well (no judgement needed).
3. Each window's answer is validated (codememory.extract.output); an invalid answer gets one repair
   request quoting the reason; a second invalid answer is dropped (logged with its reason) and the
   heuristic extractor runs on that window instead, so the span still yields memories.
4. Budgets: before every call the estimated cost is checked against the session and daily budgets. Over
   budget, no more calls are made for the session: the remaining windows get the heuristic extractor and
   their rows say `over_budget`. Every call's spend goes to `llm_spend`.
5. A model that cannot be reached (LLMError) ends the run: the row says `failed` and the same turns are
   retried on the next run; after MAX_FAILED_ATTEMPTS failed runs of a span, the heuristic takes it.
6. Memories go through `Store.add` (scrub, dedup, embedding, links, entities) with the turn's
   `memory_source` (and who said it: `said_by:<who>`, core.provenance.said_by) and
   `entered_by="codememory-extract:<llm|heuristic>"`; duplicates are counted apart.

Crash safety: each memory is its own transaction and the span's row is written after its memories. If
the process dies in between, the next run extracts the same turns again and `Store.add` returns the
existing memories instead of copies (identical text for the rules; for a model, identical or
near-identical answers at temperature 0, and the existing memories are in its prompt).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codememory.capture.turns import SessionInfo, Todo, ToolCall, Turn
from codememory.core.dates import now_iso, now_utc
from codememory.core.model import CATEGORIES
from codememory.core.provenance import source_said_by
from codememory.errors import InvalidInput, InvalidOutput, LLMError
from codememory.extract.budget import Budget
from codememory.extract.candidate import Candidate
from codememory.extract.compress import (
    Window,
    analyze_tool,
    compact_transcript,
    describe_tool,
    shorten,
    split_windows,
    tool_prompt,
)
from codememory.extract.heuristic import explicit_candidates, heuristic_candidates, in_a_memory_s_mood, unique
from codememory.extract.known import KnownMemories, known_memories
from codememory.extract.llm import Provider, compression_provider_from_config
from codememory.extract.model_speakers import SpeakerCheck
from codememory.extract.output import ExtractionOutput, answer_schema, parse_answer
from codememory.extract.prompt_templates import Prompts, fill, prompts_folder
from codememory.extract.reader import without_empty
from codememory.extract.relayed import without_relayed
from codememory.extract.report import ExtractionReport, SpanReport, overall_status
from codememory.extract.revisions import revise_stored
from codememory.store.extraction import ExtractionRow, ExtractionTables
from codememory.text.privacy import scrub
from codememory.text.tokens import estimate_tokens

if TYPE_CHECKING:
    from codememory.service.project_store import Store

log = logging.getLogger("codememory.extract")

EXTRACT_MAX_TOKENS = 2048
COMPRESS_MAX_TOKENS = 160
MAX_FAILED_ATTEMPTS = 3
# Tools whose deterministic sentence is already exact ("Read src/a.py"): never worth a compression call.
_EXACT_KINDS = frozenset({"write", "edit", "read", "search", "todo"})


class _OverBudget(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class ModelCandidate(Candidate):
    """A model's memory: it may replace stored ones (their ids, checked against those the prompt showed)."""

    supersedes: tuple[str, ...] = ()


@dataclass
class _Answer:
    candidates: list[Candidate]
    fallback_reason: str | None = None  # the model's answer was dropped: the heuristic ran instead
    already_known: tuple[str, ...] = ()  # stored memories the window restated
    refused: int = 0  # memories the transcript shows were not said as the model says (extract.model_speakers)


class Extractor:
    """Loads the prompts (fail fast: PromptFileError) and extracts sessions into one store. The prompts come
    from `prompts_dir`, else `[llm] prompts_dir`, else the package. With a model, tool calls are compressed by
    `[llm] compress_model` when set, by the extraction model with `compress_tools`, else deterministically."""

    def __init__(self, store: Store, provider: Provider | None = None, *, prompts_dir: Path | None = None) -> None:
        self.store = store
        self.provider = provider
        self.cfg = store.config.llm
        self.prompts = Prompts.load(prompts_dir or prompts_folder(self.cfg.prompts_dir, store.root))
        self.compressor: Provider | None = None
        if provider is not None:
            self.compressor = compression_provider_from_config(self.cfg) or (
                provider if self.cfg.compress_tools else None
            )
        self.tables = ExtractionTables(store.db)

    # ------------------------------------------------------------------------------------ entry
    def extract_session(
        self, session: SessionInfo, turns: Sequence[Turn], *, todos: Iterable[Todo] = ()
    ) -> ExtractionReport:
        report = ExtractionReport(session.source, session.session_id)
        done = self.tables.last_done_seq(session.source, session.session_id)
        new = _new_turns(session, turns, done)
        if not new:
            return report
        report.first_seq, report.last_seq = new[0].seq, new[-1].seq
        todos = list(todos)
        if self.provider is None:
            self._heuristic_span(report, session, new, todos, status=None, detail={})
        else:
            attempts = self.tables.failed_attempts(session.source, session.session_id, done)
            if attempts >= MAX_FAILED_ATTEMPTS:
                detail = {"reason": f"the model failed {attempts} times on these turns; heuristic fallback"}
                log.warning("extract %s: %s", session.session_id, detail["reason"])
                self._heuristic_span(report, session, new, todos, status=None, detail=detail)
            else:
                self._llm_spans(report, session, new, todos, self.provider)
        report.status = overall_status(report.spans)
        log.info(
            "extract %s %s turns %d-%d: %s, %d new, %d duplicates, %d dropped, %d model calls",
            session.source,
            session.session_id,
            report.first_seq,
            report.last_seq,
            report.status,
            len(report.created_ids),
            len(report.duplicate_ids),
            report.dropped,
            report.llm_calls,
        )
        return report

    # -------------------------------------------------------------------------------- heuristic
    def _heuristic_span(
        self,
        report: ExtractionReport,
        session: SessionInfo,
        turns: Sequence[Turn],
        todos: Sequence[Todo],
        *,
        status: str | None,
        detail: dict[str, Any],
    ) -> None:
        started = now_iso()
        # the learned reader vetoes the rules' empty candidates (extract.reader); without its model, the rules alone
        candidates = without_empty(heuristic_candidates(turns, session, todos), self.store.semantic)
        span = SpanReport(turns[0].seq, turns[-1].seq, "heuristic", "ok", detail=dict(detail))
        made = len(report.created_ids)
        self._store(report, span, candidates, turns)
        # what this span's user changed, stored by an earlier span or session, gives way (extract.revisions)
        revise_stored(self.store, turns, report.created_ids[made:])
        span.status = status or ("ok" if span.created or span.duplicates else "empty")
        self._record(report, session, span, started)

    # -------------------------------------------------------------------------------------- llm
    def _llm_spans(
        self,
        report: ExtractionReport,
        session: SessionInfo,
        turns: Sequence[Turn],
        todos: Sequence[Todo],
        provider: Provider,
    ) -> None:
        budget = Budget.for_session(self.store.db, self.cfg, session.session_id, provider.name)
        root = session.project_root
        windows = split_windows(compact_transcript(turns, root=root), self.cfg.max_transcript_tokens)
        header = self._header(session)
        speakers = SpeakerCheck(turns)
        if self.compressor is not None:
            overhead = estimate_tokens(self.prompts.extraction_system + self.prompts.extraction_user + "".join(header))
            overhead += max(self.cfg.known_memories_tokens, 0) + EXTRACT_MAX_TOKENS + provider.overhead_tokens
            reserve = sum(w.tokens + overhead for w in windows)
            describe = self._compressor(self.compressor, budget, report, root, reserve)
            windows = split_windows(
                compact_transcript(turns, root=root, describe=describe), self.cfg.max_transcript_tokens
            )
        for index, window in enumerate(windows):
            span_turns = [t for t in turns if window.first_seq <= t.seq <= window.last_seq]
            window_todos = todos if index == len(windows) - 1 else []
            started = now_iso()
            known = known_memories(self.store.db, window.text, self.cfg.known_memories_tokens)
            try:
                answer = self._ask(provider, budget, report, session, window, known, header, speakers)
            except _OverBudget as exc:
                # No more calls for this session: the rules take every remaining turn, as one span.
                log.warning(
                    "extract %s turns %d-%d: %s", session.session_id, window.first_seq, turns[-1].seq, exc.reason
                )
                rest = [t for t in turns if t.seq >= window.first_seq]
                detail = {"model": provider.model, "reason": exc.reason}
                self._heuristic_span(report, session, rest, todos, status="over_budget", detail=detail)
                return
            except LLMError as exc:
                self._failed(report, session, turns, window, exc, started)
                return
            if answer.fallback_reason is not None:
                detail = {"model": provider.model, "reason": answer.fallback_reason}
                self._heuristic_span(report, session, span_turns, window_todos, status=None, detail=detail)
                continue
            span = SpanReport(window.first_seq, window.last_seq, "llm", "ok", detail={"model": provider.model})
            # a model's memory is held to the same mood as the rules' (text.mood): a statement, not a question, a
            # narration of the assistant's steps or a printed line
            candidates = [c for c in answer.candidates if in_a_memory_s_mood(c, model_written=True)]
            candidates = without_relayed(candidates)  # a source's instruction retold is no memory (extract.relayed)
            candidates += explicit_candidates(span_turns, window_todos)
            self._store(report, span, unique(candidates), span_turns)
            span.dropped += answer.refused
            report.dropped += answer.refused
            if answer.already_known:
                span.duplicates += len(answer.already_known)
                report.duplicate_ids.extend(answer.already_known)
            span.status = "ok" if span.created or span.duplicates else "empty"
            self._record(report, session, span, started)

    def _ask(
        self,
        provider: Provider,
        budget: Budget,
        report: ExtractionReport,
        session: SessionInfo,
        window: Window,
        known: KnownMemories,
        header: tuple[str, str],
        speakers: SpeakerCheck,
    ) -> _Answer:
        system = self.prompts.extraction_system
        user = fill(
            self.prompts.extraction_user,
            project=header[0],
            session=header[1],
            existing_memories=known.text or "(none yet)",
            transcript=window.text,
        )
        answer = self._call(provider, budget, report, system, user, "extract")
        try:
            output = _checked(answer, known)
        except InvalidOutput as first:
            log.warning(
                "extract %s turns %d-%d: model output invalid (%s); asking for a repair",
                session.session_id,
                window.first_seq,
                window.last_seq,
                first.reason,
            )
            repair = fill(
                self.prompts.extraction_repair,
                error=first.reason,
                previous_answer=scrub(answer)[:2000] or "(empty)",
                categories=", ".join(CATEGORIES),
            )
            answer = self._call(provider, budget, report, system, f"{user}\n\n{repair}", "repair")
            try:
                output = _checked(answer, known)
            except InvalidOutput as second:
                reason = f"model output invalid twice: {second.reason}"
                log.warning(
                    "extract %s turns %d-%d: %s; dropped, heuristic fallback",
                    session.session_id,
                    window.first_seq,
                    window.last_seq,
                    reason,
                )
                report.errors.append(reason)
                return _Answer([], fallback_reason=reason)
        candidates: list[Candidate] = []
        refused = 0
        for item in output.memories:
            seq = item.turn if item.turn in window.seqs else window.last_seq
            refusal = speakers.refusal(item.category, item.said_by, item.turn if item.turn in window.seqs else None)
            if refusal is not None:
                log.info("extract %s turn %d: a %s memory was not stored: %s", session.session_id, seq, item.category,
                         refusal)  # fmt: skip
                refused += 1
                continue
            candidates.append(
                ModelCandidate(
                    item.text,
                    item.category,
                    item.importance,
                    seq,
                    tuple(item.entities),
                    rule="llm",
                    said_by=item.said_by or "",
                    supersedes=tuple(dict.fromkeys(item.supersedes)),
                )
            )
        return _Answer(candidates, already_known=tuple(dict.fromkeys(output.already_known)), refused=refused)

    def _call(
        self, provider: Provider, budget: Budget, report: ExtractionReport, system: str, user: str, purpose: str
    ) -> str:
        estimate = estimate_tokens(system) + estimate_tokens(user) + provider.overhead_tokens
        refusal = budget.refusal(estimate, EXTRACT_MAX_TOKENS)
        if refusal:
            raise _OverBudget(refusal)
        completion = provider.complete(
            system, user, purpose=purpose, max_tokens=EXTRACT_MAX_TOKENS, json_output=True, schema=answer_schema()
        )
        budget.record(completion, purpose)
        report.llm_calls += 1
        report.prompt_tokens += completion.prompt_tokens
        report.completion_tokens += completion.completion_tokens
        return completion.text

    def _compressor(
        self, provider: Provider, budget: Budget, report: ExtractionReport, root: str, reserve: int
    ) -> Callable[[ToolCall], str]:
        """The model's description of each tool call, while the budget (minus what the extraction itself
        needs) allows; the deterministic sentence otherwise, and after the first error."""
        system = self.prompts.compression_system
        stopped = False

        def describe(call: ToolCall) -> str:
            nonlocal stopped
            fallback = describe_tool(call, root)
            if stopped or analyze_tool(call, root).kind in _EXACT_KINDS:
                return fallback
            user = tool_prompt(call, root)
            estimate = estimate_tokens(system) + estimate_tokens(user) + provider.overhead_tokens
            if budget.refusal(estimate, COMPRESS_MAX_TOKENS, reserve=reserve):
                stopped = True
                return fallback
            try:
                completion = provider.complete(system, user, purpose="compress", max_tokens=COMPRESS_MAX_TOKENS)
            except LLMError as exc:
                log.warning("tool compression stopped after an error: %s", exc)
                stopped = True
                return fallback
            budget.record(completion, "compress", provider=provider.name)
            report.llm_calls += 1
            report.prompt_tokens += completion.prompt_tokens
            report.completion_tokens += completion.completion_tokens
            return _two_sentences(scrub(completion.text)) or fallback

        return describe

    def _failed(
        self,
        report: ExtractionReport,
        session: SessionInfo,
        turns: Sequence[Turn],
        window: Window,
        exc: LLMError,
        started: str,
    ) -> None:
        reason = str(exc)
        log.warning(
            "extract %s turns %d-%d: model call failed: %s", session.session_id, window.first_seq, turns[-1].seq, reason
        )
        report.errors.append(reason)
        span = SpanReport(window.first_seq, turns[-1].seq, "llm", "failed", detail={"reason": reason})
        self._record(report, session, span, started)

    # -------------------------------------------------------------------------------- storing
    def _store(
        self,
        report: ExtractionReport,
        span: SpanReport,
        candidates: Sequence[Candidate],
        turns: Sequence[Turn],
    ) -> None:
        by_seq = {t.seq: t for t in turns}
        now = now_utc()
        for c in candidates:
            turn = by_seq.get(c.seq) or turns[-1]
            entered_by = f"codememory-extract:{'llm' if c.rule == 'llm' else 'heuristic'}"
            expires: datetime | None = c.expires_at if c.expires_at and c.expires_at > now else None
            supersedes = list(c.supersedes) if isinstance(c, ModelCandidate) and c.supersedes else None
            try:
                result = self.store.add(
                    c.text,
                    supersedes=supersedes,
                    category=c.category,
                    importance=c.importance,
                    tags=list(c.tags) or None,
                    expires=expires,
                    source=source_said_by(turn.memory_source, c.said_by) if c.said_by else turn.memory_source,
                    entered_by=entered_by,
                    entities=list(c.entities) or None,
                )
            except InvalidInput as exc:
                span.dropped += 1
                report.dropped += 1
                log.info(
                    "extract %s turn %d: a %s memory was refused: %s", turn.session_id, turn.seq, c.category, _safe(exc)
                )
                continue
            if result.created:
                span.created += 1
                report.created_ids.append(result.memory.id)
            else:
                span.duplicates += 1
                report.duplicate_ids.append(result.memory.id)

    def _record(self, report: ExtractionReport, session: SessionInfo, span: SpanReport, started: str) -> None:
        detail = {**span.detail, "duplicates": span.duplicates, "dropped": span.dropped}
        self.tables.record(
            ExtractionRow(
                source=session.source,
                session_id=session.session_id,
                first_seq=span.first_seq,
                last_seq=span.last_seq,
                method=span.method,
                status=span.status,
                memory_count=span.created,
                detail=json.dumps(detail, ensure_ascii=False, sort_keys=True),
                started_at=started,
                finished_at=now_iso(),
            )
        )
        report.spans.append(span)

    # ------------------------------------------------------------------------------ prompt parts
    def _header(self, session: SessionInfo) -> tuple[str, str]:
        """(project, session) lines of the prompt."""
        project = scrub(Path(session.project_root).name or session.project_root)
        title = " ".join(scrub(session.title or "").split())[:120]
        return project, f"{session.source} {session.session_id}" + (f' "{title}"' if title else "")


def _new_turns(session: SessionInfo, turns: Sequence[Turn], done: int) -> list[Turn]:
    """The session's completed turns after `done`, in order, stopping at the first unfinished one."""
    out: list[Turn] = []
    for turn in sorted((t for t in turns if t.session_id == session.session_id), key=lambda t: t.seq):
        if turn.seq <= done:
            continue
        if not turn.completed:
            break
        out.append(turn)
    return out


def _checked(answer: str, known: KnownMemories) -> ExtractionOutput:
    """The answer, valid against the schema and naming only memories the prompt showed; else InvalidOutput."""
    output = parse_answer(answer)
    for index, item in enumerate(output.memories):
        for ref in item.supersedes:
            if ref not in known.ids:
                raise InvalidOutput(
                    f"memories[{index}].supersedes: {ref[:40]!r} is not the id of a memory listed as already stored"
                )
    for ref in output.already_known:
        if ref not in known.ids:
            raise InvalidOutput(f"already_known: {ref[:40]!r} is not the id of a memory listed as already stored")
    return output


def _two_sentences(text: str, limit: int = 300) -> str:
    return shorten(" ".join(re.split(r"(?<=[.!?])\s+", text.strip())[:2]), limit)


def _safe(exc: Exception) -> str:
    """An InvalidInput's reason without the text it may quote after a colon (a tag, a category)."""
    return str(exc).split(":", 1)[0]


def extract_session(
    store: Store,
    session: SessionInfo,
    turns: Sequence[Turn],
    *,
    provider: Provider | None,
    todos: Iterable[Todo] = (),
) -> ExtractionReport:
    """Extract a session's new turns into the store (see the module docstring)."""
    return Extractor(store, provider).extract_session(session, turns, todos=todos)
