#!/usr/bin/env bash
# ext.sh NAME: prints the last extension of a file name (report.pdf -> pdf).
echo "${1#*.}"
