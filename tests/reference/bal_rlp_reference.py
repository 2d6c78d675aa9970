#!/usr/bin/env python3
"""bal_rlp_reference: an independent EIP-7928 block access list encoder (python3-rlp), the
oracle of the C++ codec's tests.

usage: bal_rlp_reference.py FILE.json
  FILE holds either one BAL in its JSON form ({"accounts": [...]}, the shape of
  tests/vectors/bal/*.json) or a block file's JSON form ({"blocks": [block, ...]}, each
  block with number, tree, pre_state_root, tx_count, txs and accounts). Prints the RLP as
  lowercase hex (no 0x) on one line: the BAL's, or the blocks' items concatenated.
"""
import json
import sys

import rlp


def u(text):
    return int(text, 16)


def h(text):
    return bytes.fromhex(text[2:] if text.startswith(("0x", "0X")) else text)


def bal(j):
    return [
        [
            h(a["address"]),
            [[u(slot), [[i, u(v)] for i, v in changes]] for slot, changes in a["storage_changes"]],
            [u(r) for r in a["storage_reads"]],
            [[i, u(b)] for i, b in a["balance_changes"]],
            [[i, n] for i, n in a["nonce_changes"]],
            [[i, h(c)] for i, c in a["code_changes"]],
        ]
        for a in j["accounts"]
    ]


def block(b):
    header = [
        b["number"],
        b["tree"].encode(),
        h(b["pre_state_root"]) if b["pre_state_root"] is not None else b"",
        b["tx_count"] if b["tx_count"] is not None else [],
        [[t["gas_used"], t["calls"]] for t in b["txs"]],
    ]
    return [header, bal(b)]


def main():
    with open(sys.argv[1]) as f:
        j = json.load(f)
    if "blocks" in j:
        out = b"".join(rlp.encode(block(b)) for b in j["blocks"])
    else:
        out = rlp.encode(bal(j))
    print(out.hex())


if __name__ == "__main__":
    main()
