"""`python -m codememory.daemon run|start|stop|status|install|uninstall`: the same as `codememory daemon ...`
(`start` spawns the daemon this way, with the interpreter that runs it)."""

from codememory.daemon.commands import daemon

if __name__ == "__main__":
    daemon(prog_name="codememory daemon")
