"""Publishing to the organisation's Milvus (`codememory publish`, the daemon's publish task): thin over
codememory.remote.publish, which holds the delta, the cursor and what may leave the machine."""

from __future__ import annotations

from codememory.remote.publish import DeleteProjectResult, Progress, PublishResult, delete_project, publish

__all__ = ["DeleteProjectResult", "Progress", "PublishResult", "delete_project", "publish"]
