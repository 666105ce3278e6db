import sys

_n = 0
_failed = 0


def check(name, got, want):
    global _n, _failed
    _n += 1
    ok = got == want
    if not ok:
        _failed += 1
    print("%s %d - %s%s" % ("ok" if ok else "not ok", _n, name, "" if ok else ": expected %r, got %r" % (want, got)))


def done():
    print("# %d/%d passed" % (_n - _failed, _n))
    sys.exit(1 if _failed else 0)

import json

with open("config.json") as f:
    config = json.load(f)
REQUIRED = [line.split('"')[1] for line in open("server.log") if " ERROR " in line and "missing required setting" in line]
for key in REQUIRED:
    check("config.json has the setting server.log says is missing", key in config, True)
check("config.json keeps its port", config.get("port"), 8080)
done()
