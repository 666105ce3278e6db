DEFAULT_PORT = 8080


def url(host, port=None):
    return "http://%s:%d/" % (host, port or DEFAULT_PORT)
