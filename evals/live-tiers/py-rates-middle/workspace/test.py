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

from rates import convert

EXPECTED = {
    "AUD": 0.61,
    "BGN": 0.51,
    "BRL": 0.18,
    "CAD": 0.68,
    "CHF": 1.04,
    "CNY": 0.13,
    "CZK": 0.04,
    "DKK": 0.13,
    "GBP": 1.17,
    "HKD": 0.12,
    "HUF": 0.0025,
    "ILS": 0.25,
    "INR": 0.011,
    "JPY": 0.0062,
    "KRW": 0.0007,
    "MXN": 0.05,
    "NOK": 0.086,
    "NZD": 0.56,
    "PLN": 0.23,
    "SEK": 0.087,
    "SGD": 0.69,
    "THB": 0.026,
    "TRY": 0.028,
    "USD": 0.92,
    "ZAR": 0.05,
}

for currency, rate in EXPECTED.items():
    for amount in range(1, 101):
        check("convert(%d, %r) with the rate of %s" % (amount, currency, currency), convert(amount, currency), round(amount * rate, 4))
done()
