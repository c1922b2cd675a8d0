"""The project store as a library (`codememory.open_store`): the one core every pipeline, operation and entry point
writes and reads through.
"""
