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

from words import count_words

check("count_words('a b c')", count_words("a b c"), 3)
check("count_words('a  b')", count_words("a  b"), 2)
done()
