#!/usr/bin/env bash
# The visible test: one line per case, exit 1 when any fails.
n=0
failed=0
check() { # NAME EXPECTED ACTUAL
  n=$((n + 1))
  if [ "$3" = "$2" ]; then
    echo "ok $n - $1"
  else
    failed=$((failed + 1))
    echo "not ok $n - $1: expected \"$2\", got \"$3\""
  fi
}
done_() {
  echo "# $((n - failed))/$n passed"
  [ "$failed" -eq 0 ]
}

check "hello.sh Sam" "Welcome, Sam" "$(bash hello.sh Sam)"
done_
