"""The organisation's memory on Milvus: publishing a project's shareable memories to one collection
(`publish`), and searching it beside the local store (`org_search`). pymilvus is an optional extra
(`pip install -e ".[milvus]"`) imported only here, and only when a remote is used."""
