"""Issue 25: a todo list said in prose is the todos, not also a sentence inside a choice or a rule of its own.
The sentences are written for this test (a bakery's order app), not taken from a benchmark set."""

from __future__ import annotations

from codememory.extract import Todo, heuristic_candidates
from support.extraction import SESSION, turn

OFFER = (
    "Orders now show up on the counter screen.",
    "I could add accounts with passwords for each shop, with Auth0 or at least a shared PIN. Want that?",
)
REFUSAL = (
    "no. the tablet is only reachable on the shop wifi and that is enough for us. Commit, and note for later: a "
    "screen to correct wrong prices, a button that prints the day's orders, and running it on the back-office NUC."
)
LIST = [
    Todo("Screen for correcting wrong prices", "pending", "medium"),
    Todo("Button to print the day's orders", "pending", "medium"),
    Todo("Run it on the back-office NUC", "pending", "low"),
]


def test_a_refusal_ends_where_its_reason_ends_and_the_list_stays_the_todos() -> None:
    found = heuristic_candidates([turn(1, "Show orders on the counter.", OFFER), turn(2, REFUSAL)], SESSION, LIST)
    others = [c for c in found if c.category != "todo"]
    assert others and all("print" not in c.text and "NUC" not in c.text for c in others), others
    # the refusal and its reason are still a memory
    assert any(c.text.startswith("Turned down: add accounts") and "wifi" in c.text for c in others)
    assert len([c for c in found if c.category == "todo"]) == 3


def test_a_message_that_is_only_the_list_is_not_also_a_rule() -> None:
    said = (
        "Put this in the todo for Monday: the price list must be checked by Mrs. Okafor, I try the printer in the "
        "shop myself, and ask Tomasz about the old backup job."
    )
    todos = [
        Todo("Price list checked by Mrs. Okafor", "pending", "medium"),
        Todo("Try the printer in the shop", "pending", "medium"),
        Todo("Ask Tomasz about the old backup job", "pending", "low"),
    ]
    found = heuristic_candidates([turn(1, said, ("Noted.",))], SESSION, todos)
    assert [c.category for c in found] == ["todo"] * 3, [(c.category, c.text) for c in found]


def test_one_todo_sharing_words_with_a_choice_leaves_the_choice_alone() -> None:
    turns = [turn(1, "We use PostgreSQL 16 for the orders, because the shops already back it up nightly.")]
    found = heuristic_candidates(turns, SESSION, [Todo("Move the orders to PostgreSQL 16", "pending", "low")])
    assert any(c.category != "todo" and "PostgreSQL 16" in c.text for c in found)


def test_a_choice_the_agent_turns_into_todos_is_still_a_memory() -> None:
    """The agent often writes a decision's work down as todos: the choice and its reason ('not cron', 'only on the
    wifi') outlive the todos, which are dropped once done. Only the sentences after a choice's first can go."""
    chose = "We use Redis for the session cache and Celery for the nightly report jobs, not cron."
    did = [
        Todo("Set up Redis for the session cache", "pending", "medium"),
        Todo("Move the nightly report jobs to Celery", "pending", "medium"),
    ]
    found = heuristic_candidates([turn(1, chose, ("OK, doing that.",))], SESSION, did)
    assert any(c.category == "decision" and "not cron" in c.text for c in found), found
    refused = "Don't use Auth0 for the shop logins or a shared PIN: the tablet is only on the shop wifi."
    undo = [
        Todo("Remove Auth0 from the shop logins", "pending", "medium"),
        Todo("Drop the shared PIN on the tablet", "pending", "medium"),
    ]
    found = heuristic_candidates([turn(1, refused, ("OK.",))], SESSION, undo)
    assert any(c.category == "rejected_alternative" and "wifi" in c.text for c in found), found
