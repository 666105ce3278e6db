def median(xs):
    s = sorted(xs)
    mid = len(s) // 2
    return s[mid]
