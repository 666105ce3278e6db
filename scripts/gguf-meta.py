#!/usr/bin/env python3
"""Prints a GGUF file's identifying metadata as key=value lines (used by scripts/live-model.sh before it relies on a
weights file). Reads only the header; tokenizer arrays are skipped, their lengths printed. The chat template is
printed as its length, its SHA-256 and whether it mentions a system role, never whole.

Format: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md (little-endian; version 2 and 3).
"""
import hashlib
import struct
import sys

SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
STRING, ARRAY = 8, 9
WANTED = ("general.architecture", "general.name", "general.finetune", "general.basename", "general.size_label",
          "general.license", "general.file_type")


class Reader:
    def __init__(self, f):
        self.f = f

    def take(self, n):
        b = self.f.read(n)
        if len(b) != n:
            raise ValueError("truncated header")
        return b

    def scalar(self, t):
        fmt = SCALARS[t]
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self):
        (n,) = struct.unpack("<Q", self.take(8))
        if n > 1 << 26:
            raise ValueError("string length %d out of bounds" % n)
        return self.take(n).decode("utf-8", "replace")

    def value(self, t, keep):
        if t in SCALARS:
            return self.scalar(t)
        if t == STRING:
            return self.string()
        if t == ARRAY:
            (et,) = struct.unpack("<I", self.take(4))
            (n,) = struct.unpack("<Q", self.take(8))
            items = [self.value(et, keep) for _ in range(n)]
            return items if keep else ("<array of %d>" % n, n)
        raise ValueError("unknown value type %d" % t)


def main(path):
    with open(path, "rb") as f:
        r = Reader(f)
        if r.take(4) != b"GGUF":
            print("%s: not a GGUF file (bad magic)" % path, file=sys.stderr)
            return 1
        (version,) = struct.unpack("<I", r.take(4))
        if version not in (2, 3):
            print("%s: GGUF version %d not supported" % (path, version), file=sys.stderr)
            return 1
        _tensors, kv_count = struct.unpack("<QQ", r.take(16))
        meta = {}
        for _ in range(kv_count):
            key = r.string()
            (t,) = struct.unpack("<I", r.take(4))
            meta[key] = r.value(t, keep=False)
    out = {"gguf.version": version}
    for k in WANTED:
        if k in meta:
            out[k] = meta[k]
    arch = meta.get("general.architecture")
    if arch and "%s.context_length" % arch in meta:
        out["context_length"] = meta["%s.context_length" % arch]
    tokens = meta.get("tokenizer.ggml.tokens")
    if isinstance(tokens, tuple):
        out["vocab_size"] = tokens[1]
    tpl = meta.get("tokenizer.chat_template")
    if isinstance(tpl, str):
        out["chat_template.chars"] = len(tpl)
        out["chat_template.sha256"] = hashlib.sha256(tpl.encode("utf-8")).hexdigest()
        out["chat_template.kind"] = ("chatml" if "<|im_start|>" in tpl else
                                     "gemma" if "<start_of_turn>" in tpl else "other")
        out["chat_template.system_role"] = "yes" if "system" in tpl else "no"
    else:
        out["chat_template.chars"] = 0
    for k, v in out.items():
        print("%s=%s" % (k, v))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: gguf-meta.py FILE.gguf", file=sys.stderr)
        sys.exit(2)
    try:
        sys.exit(main(sys.argv[1]))
    except (OSError, ValueError, struct.error) as e:
        print("%s: cannot read GGUF header: %s" % (sys.argv[1], e), file=sys.stderr)
        sys.exit(1)
