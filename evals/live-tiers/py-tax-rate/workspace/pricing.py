"""Prices with tax."""
TAX_RATE = 0.2


def gross(net):
    return round(net * (1 + TAX_RATE), 2)
