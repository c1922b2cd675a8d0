"""Text rules with no storage: entities, the query language, `*Remember*` notes, privacy scrubbing, rendering into an
agent's context, one token estimator.
"""
