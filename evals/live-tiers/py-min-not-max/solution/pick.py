def smallest(xs):
    """The smallest item of a non-empty list."""
    return min(xs)
