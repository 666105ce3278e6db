def shout(s):
    return s.upper() + "!"


def reverse(s):
    return s[::-1]
