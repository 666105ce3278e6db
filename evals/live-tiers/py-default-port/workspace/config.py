DEFAULT_PORT = 8000


def url(host, port=None):
    return "http://%s:%d/" % (host, port or DEFAULT_PORT)
