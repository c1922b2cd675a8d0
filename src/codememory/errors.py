"""Errors a user can cause. Entry points print their message on one line; they are never tracebacks."""


class CodememoryError(Exception):
    """Base for every error that is the user's to fix (bad input, missing store, ...)."""

    exit_code = 1


class InvalidInput(CodememoryError):
    exit_code = 2


class StoreNotFound(CodememoryError):
    pass


class StoreUnusable(CodememoryError):
    """Corrupt, unreadable, or written by a newer codememory."""


class UnexpectedSchema(StoreUnusable):
    """The store holds schema objects (triggers, views, tables, indexes) codememory did not create."""


class NotFound(CodememoryError):
    pass
