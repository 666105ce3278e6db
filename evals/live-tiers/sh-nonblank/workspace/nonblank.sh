#!/usr/bin/env bash
# nonblank.sh: how many non-blank lines its standard input has.
wc -l | tr -d ' '
