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


rows=""
for i in $(seq 1 1500); do rows+="id$i,name$i,city$i"$'\n'; done
got=$(printf '%s' "$rows" | bash column.sh 2)
i=0
first=""
while IFS= read -r line; do
  i=$((i + 1))
  check "row $i: column 2 of \"id$i,name$i,city$i\" is name$i" "name$i" "$line"
  [ -n "$first" ] || [ "$line" = "name$i" ] || first="row $i: expected \"name$i\", got \"$line\""
done <<<"$got"
[ -z "$first" ] && echo "no failures" || echo "FAILED: $first"
done_
