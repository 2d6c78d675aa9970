#!/usr/bin/python3
# Generates keccak256_vectors.txt: Ethereum Keccak-256 digests (pycryptodomex oracle) of
# deterministic pseudo-random messages. Only the length and digest are stored; the message
# bytes are re-derived by the test with the same splitmix64 stream:
#   message k: state = (k + 1) * 0x9E3779B97F4A7C15; each splitmix64 output gives 8 bytes,
#   little-endian, truncated to the length.
# Line format: "<k> <len> <digest hex>". Run: /usr/bin/python3 gen_keccak256_vectors.py
import random
from Cryptodome.Hash import keccak

M = (1 << 64) - 1

def message(k, n):
    s = ((k + 1) * 0x9E3779B97F4A7C15) & M
    out = bytearray()
    while len(out) < n:
        s = (s + 0x9E3779B97F4A7C15) & M
        z = s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
        z ^= z >> 31
        out += z.to_bytes(8, "little")
    return bytes(out[:n])

boundaries = [0, 1, 2, 7, 8, 31, 32, 33, 55, 56, 63, 64, 65, 100, 127, 128, 134, 135, 136,
              137, 138, 200, 255, 256, 270, 271, 272, 273, 274, 300, 406, 407, 408, 409,
              410, 511, 512, 542, 543, 544, 545, 546, 599, 600]
rng = random.Random(7864)
lengths = boundaries + [rng.randint(0, 600) for _ in range(200 - len(boundaries))]
with open(__file__.rsplit("/", 1)[0] + "/keccak256_vectors.txt" if "/" in __file__ else "keccak256_vectors.txt", "w") as f:
    for k, n in enumerate(lengths):
        h = keccak.new(digest_bits=256)
        h.update(message(k, n))
        f.write(f"{k} {n} {h.hexdigest()}\n")
