"""python3 -m faultline_capture convert CHECKPOINT OUT.h5 [--trust]
python3 -m faultline_capture rerun TRACE LABEL DEVICE [--repeat N]

Exit codes: 0 done, 2 bad input (one line on standard error naming the file and the problem)."""
import argparse
import sys

from .convert import ConvertError, convert_checkpoint
from .rerun import MAX_REPEAT, TraceError, rerun


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m faultline_capture",
                                     description="Faultline capture tools (docs/capture.md)")
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("convert", help="torch.save checkpoint -> HDF5 snapshot")
    c.add_argument("checkpoint")
    c.add_argument("out")
    c.add_argument("--trust", action="store_true",
                   help="allow full unpickling (runs code from the file: only for files you trust)")
    r = sub.add_parser("rerun", help="re-run a trace's ops on a torch device under a new label")
    r.add_argument("trace")
    r.add_argument("label")
    r.add_argument("device")
    r.add_argument("--repeat", type=int, default=2, metavar="N",
                   help="runs of each op (1..%d, default 2): the outputs are marked reproducible when "
                        "every run gave the same bits" % MAX_REPEAT)
    args = parser.parse_args(argv)
    try:
        if args.command == "convert":
            count, size, skipped = convert_checkpoint(args.checkpoint, args.out, trust=args.trust)
            print("%s: %d tensor(s), %.1f MiB%s" % (args.out, count, size / 2**20,
                  ", skipped %d non-tensor value(s)" % len(skipped) if skipped else ""))
        else:
            rerun(args.trace, args.label, args.device, repeat=args.repeat)
    except (ConvertError, TraceError) as e:
        print(e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
