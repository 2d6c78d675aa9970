#!/usr/bin/env python3
"""gen_loader_inputs: deterministic inputs for the loader benchmark of `statetree root`.

  gen_loader_inputs.py genesis N FILE   a wrapped genesis allocation of N accounts, shaped like
                                        mainnet's: most accounts "<address>": "<decimal balance>",
                                        every 10th an object with a nonce, every 100th with 64
                                        bytes of code and two storage slots
  gen_loader_inputs.py kv N FILE        N lines "0x<32-byte key> 0x<32-byte value>"

Addresses, keys and values are SHA-256 of the index, so the files are the same on every run.
"""
import hashlib
import sys


def h(tag: str, i: int) -> str:
    return hashlib.sha256(f"{tag}{i}".encode()).hexdigest()


def genesis(n: int, out) -> None:
    out.write('{"network": "generated", "accounts": %d, "alloc": {\n' % n)
    for i in range(n):
        addr = h("a", i)[:40]
        bal = str(int(h("b", i)[:20], 16))
        if i % 100 == 0:
            acc = ('{"balance": "%s", "nonce": %d, "code": "0x%s", "storage": {"0x%s": "0x%s", "0x01": "0x2a"}}'
                   % (bal, i % 1000, h("c", i) * 2, h("s", i), h("v", i)))
        elif i % 10 == 0:
            acc = '{"balance": "0x%x", "nonce": "%d"}' % (int(bal), i % 1000)
        else:
            acc = '"%s"' % bal
        out.write(' "0x%s": %s%s\n' % (addr, acc, "," if i + 1 < n else ""))
    out.write("}}\n")


def kv(n: int, out) -> None:
    for i in range(n):
        out.write("0x%s 0x%s\n" % (h("k", i), h("w", i)))


def main() -> int:
    if len(sys.argv) != 4 or sys.argv[1] not in ("genesis", "kv"):
        sys.stderr.write(__doc__)
        return 2
    n = int(sys.argv[2])
    with open(sys.argv[3], "w", buffering=1 << 20) as out:
        (genesis if sys.argv[1] == "genesis" else kv)(n, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
