#!/usr/bin/env bash
# column.sh N: the N-th comma-separated field of each line of standard input.
cut -d';' -f"$1"
