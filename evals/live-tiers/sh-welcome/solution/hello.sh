#!/usr/bin/env bash
# hello.sh NAME: greets NAME.
echo "Welcome, $1"
