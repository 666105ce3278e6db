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

from pricing import gross

check("gross(100)", gross(100), 125.0)
check("gross(8)", gross(8), 10.0)
done()
