#!/usr/bin/env bash
# count.sh: how many lines its standard input has.
wc -l | tr -d ' '
