def count_words(text):
    """How many words, however many spaces separate them."""
    return len(text.split(" "))
