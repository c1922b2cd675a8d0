#!/usr/bin/env python3
"""Validate the precision/judge2 split (and, with `--review FILE`, print the label review aid): dev/check.py, the one
validator the splits share, run on this folder."""

import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))

if __name__ == "__main__":
    runpy.run_path(os.path.join(HERE, "..", "dev", "check.py"), run_name="check")["main"](HERE)
