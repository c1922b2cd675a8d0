"""Hard token budgets for model calls (`[llm] session_token_budget`, `daily_token_budget`) and the spend
ledger behind them and `codememory stats`.

Before a call, its cost is estimated as the prompt's estimated tokens plus the completion's `max_tokens`
(the most it can cost); a call that could cross either budget is not made. After a call, what the provider
reports (or estimates) is recorded in `llm_spend`, under the UTC day."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from codememory.core.config import LLMConfig
from codememory.core.dates import now_utc, to_iso
from codememory.extract.llm import Completion
from codememory.store.database import Database
from codememory.store.extraction import ExtractionTables, SpendRow


def utc_day(when: datetime | None = None) -> str:
    return (when or now_utc()).astimezone(UTC).date().isoformat()


@dataclass
class Budget:
    """The budgets of one session's extraction, checked against the ledger before every call."""

    tables: ExtractionTables
    session_id: str
    session_limit: int
    daily_limit: int
    provider: str

    @classmethod
    def for_session(cls, db: Database, cfg: LLMConfig, session_id: str, provider: str) -> Budget:
        return cls(ExtractionTables(db), session_id, cfg.session_token_budget, cfg.daily_token_budget, provider)

    def session_spent(self) -> int:
        return self.tables.session_spend(self.session_id)

    def day_spent(self, now: datetime | None = None) -> int:
        return self.tables.day_spend(utc_day(now))

    def refusal(
        self, prompt_tokens: int, max_tokens: int, *, reserve: int = 0, now: datetime | None = None
    ) -> str | None:
        """Why a call of this size may not be made (None: it may). `reserve` keeps that many tokens of the
        session budget free (tool compression must leave room for the extraction itself)."""
        need = prompt_tokens + max_tokens
        spent = self.session_spent()
        if spent + need + reserve > self.session_limit:
            return (
                f"session token budget reached: {spent} spent, a call needs up to {need}"
                + (f" plus {reserve} reserved" if reserve else "")
                + f", limit {self.session_limit} (llm.session_token_budget)"
            )
        day = self.day_spent(now)
        if day + need + reserve > self.daily_limit:
            return (
                f"daily token budget reached: {day} spent today (UTC), a call needs up to {need}, "
                f"limit {self.daily_limit} (llm.daily_token_budget)"
            )
        return None

    def record(
        self, completion: Completion, purpose: str, *, provider: str | None = None, now: datetime | None = None
    ) -> None:
        """Record a call's spend; `provider` names another provider than the session's (a compression model)."""
        when = now or now_utc()
        self.tables.record_spend(
            SpendRow(
                at=to_iso(when),
                day=utc_day(when),
                provider=provider or self.provider,
                model=completion.model,
                purpose=purpose,
                session_id=self.session_id,
                prompt_tokens=completion.prompt_tokens,
                completion_tokens=completion.completion_tokens,
            )
        )


def spend_summary(db: Database, cfg: LLMConfig | None = None, *, now: datetime | None = None) -> dict[str, Any]:
    """Model spend for `codememory stats`: {today, last_7_days, all_time: {calls, prompt_tokens,
    completion_tokens, total_tokens}, per_model: [{provider, model, ...totals}] (all time, biggest first),
    budget: {daily_token_budget, session_token_budget, today_remaining} (with `cfg`)}."""
    tables = ExtractionTables(db)
    when = now or now_utc()
    today = utc_day(when)
    week_start = utc_day(when - timedelta(days=6))
    out: dict[str, Any] = {
        "today": tables.spend_since(today).to_dict(),
        "last_7_days": tables.spend_since(week_start).to_dict(),
        "all_time": tables.spend_since(None).to_dict(),
        "per_model": [
            {"provider": provider, "model": model, **total.to_dict()}
            for provider, model, total in tables.spend_per_model(None)
        ],
    }
    if cfg is not None:
        out["budget"] = {
            "daily_token_budget": cfg.daily_token_budget,
            "session_token_budget": cfg.session_token_budget,
            "today_remaining": max(cfg.daily_token_budget - out["today"]["total_tokens"], 0),
        }
    return out
