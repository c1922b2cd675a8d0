"""The lowest layer: the memory record, dates, settings, environment switches, paths, project and registry, trust,
safe file I/O, printable log lines and lenient JSON. Imports nothing else of codememory but errors.
"""
