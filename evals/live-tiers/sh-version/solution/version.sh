#!/usr/bin/env bash
VERSION=1.3.0
echo "app $VERSION"
