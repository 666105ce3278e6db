#!/usr/bin/env bash
# hello.sh NAME: greets NAME.
echo "Hi, $1"
