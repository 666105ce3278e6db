#!/usr/bin/env bash
VERSION=1.2.3
echo "app $VERSION"
