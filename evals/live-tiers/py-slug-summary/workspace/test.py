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

from slug import slugify

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "kappa", "lambda", "sigma"]
failures = []
for i in range(2000):
    a, b = WORDS[i % 10], WORDS[(i * 7) % 10]
    title = "%s %s %d" % (a.capitalize(), b, i)
    want = "%s-%s-%d" % (a, b, i)
    got = slugify(title)
    check("slugify(%r) == %r (a title of two words and a number)" % (title, want), got, want)
    if got != want and len(failures) < 3:
        failures.append("slugify(%r): expected %r, got %r" % (title, want, got))
for title, want in [("Hello,  World!", "hello-world"), ("  Trim me  ", "trim-me")]:
    got = slugify(title)
    check("slugify(%r) == %r" % (title, want), got, want)
    if got != want:
        failures.append("slugify(%r): expected %r, got %r" % (title, want, got))
print("FAILED:" if failures else "no failures")
for f in failures:
    print("  " + f)
done()
