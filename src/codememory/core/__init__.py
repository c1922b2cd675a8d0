"""The lowest layer: the memory record, dates, settings, paths, project and registry, trust and safe file I/O.
Imports nothing else of codememory but errors.
"""
