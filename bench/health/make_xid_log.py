#!/usr/bin/env python3
"""Writes a kernel log of about SIZE bytes of Xid lines for bench/health/run.sh: dmesg-stamped
Xid lines of 8 GPUs and 10 codes (distinct stamps, so none is a duplicate of another), every
100th line an ordinary kernel line, every 1000th a line a process wrote that mentions an Xid.

Usage: make_xid_log.py OUT SIZE   (SIZE in bytes; suffixes K, M, G)
"""
import sys

CODES = [13, 31, 43, 48, 63, 74, 79, 92, 94, 119]


def parse_size(text):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if text[-1].upper() in mult:
        return int(float(text[:-1]) * mult[text[-1].upper()])
    return int(text)


def main():
    out, size = sys.argv[1], parse_size(sys.argv[2])
    written, i = 0, 0
    with open(out, "w", buffering=1 << 20) as f:
        while written < size:
            lines = []
            for _ in range(1000):
                if i % 1000 == 999:
                    line = "[%7d.%06d] app[%d]: saw NVRM: Xid (PCI:0000:3b:00): 79 in a log\n" % (
                        i // 1000, i % 1000 * 1000, i % 50)
                elif i % 100 == 99:
                    line = "[%7d.%06d] usb 1-1: new high-speed USB device number %d\n" % (
                        i // 1000, i % 1000 * 1000, i % 128)
                else:
                    line = ("[%7d.%06d] NVRM: Xid (PCI:0000:%02x:00): %d, pid=%d, name=python3, "
                            "event %d of a noisy GPU\n") % (
                        i // 1000, i % 1000 * 1000, 0x10 + i % 8, CODES[i % 10], 1000 + i % 50, i)
                lines.append(line)
                i += 1
            chunk = "".join(lines)
            f.write(chunk)
            written += len(chunk)


if __name__ == "__main__":
    main()
