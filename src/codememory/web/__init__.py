"""HTTP security shared by the local servers (the daemon and `codememory mcp --http`): the loopback listening
socket, the per-install bearer token, the checks in front of every request (`security`), connections that
cannot starve a server (`http_guard`) and request bodies made valid text (`request_body`). Importing this
package imports none of them."""
